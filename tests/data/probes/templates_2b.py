"""Round 2 of the probe templates, second part (10 of 17 layouts): see render.py."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from reportlab.lib.pagesizes import LETTER

from tests.data.probes.pages import (
    Page,
    addr_block,
    footer,
    item_table,
    kv_rows,
    make_doc,
    pick,
    totals_rows,
)
from tests.data.probes.vocab import (
    ABBR,
    LABELS,
    MONTHS,
    W1,
    W2,
    fmt_date,
    money,
    q,
)


def t_es_factura(rng, i):
    """Spanish 'Factura' with NIF/CIF for both parties (Emisor/Cliente boxes), 'Fecha de expedición' vs 'Fecha de
    operación', serie + número.
    """
    lang = "es"
    d = make_doc(rng, lang, mark=rng.choice(["sym_after", "code_after", "sym_before"]))
    d["number"] = rng.choice(
        [
            f"A-{d['date'].year}/{rng.randint(1, 9999):04d}",
            f"FV{d['date'].year % 100}-{rng.randint(1, 999):03d}",
            f"{rng.randint(1, 9999)}",
        ]
    )
    p = Page()
    W, H = p.W, p.H

    def nif():
        return f"{rng.choice('ABG')}{rng.randint(10**7, 10**8 - 1)}"

    p.t(W - 50, H - 60, "FACTURA", 20, True, "r")
    p.rect(45, H - 170, 240, 90)
    p.t(50, H - 92, "EMISOR", 7, True)
    addr_block(p, 50, H - 106, [d["vendor"], *d["v_addr"], f"CIF: {nif()}"], 9, 12)
    p.rect(310, H - 170, 240, 90)
    p.t(315, H - 92, "CLIENTE", 7, True)
    addr_block(p, 315, H - 106, [d["buyer"], *d["b_addr"], f"NIF/CIF: {nif()}"], 9, 12)

    def fd(x):
        return fmt_date(x, lang, d["datefmt"])

    lab = rng.choice(["Nº Factura", "Número", "Factura nº"])
    rows = [
        (lab, d["number"]),
        ("Fecha de expedición", fd(d["date"])),
        ("Fecha de operación", fd(d["deliv_date"])),
        ("Nº de pedido", d["order_no"]),
    ]
    if rng.random() < 0.5:
        rows = [("Serie", d["number"].split("-")[0] if "-" in d["number"] else "A"), *rows]
    rng.shuffle(rows)
    x = 50
    for k, v in rows:
        p.t(x, H - 195, k, 7, True)
        p.t(x, H - 207, v, 9)
        x += 100
    y = item_table(p, d, 50, W - 50, H - 240)
    y = kv_rows(p, W - 230, W - 50, y - 6, totals_rows(rng, d), 9, val_align="r")
    p.t(50, y - 10, f"Forma de pago: transferencia · Vencimiento {fd(d['due'])}", 8)
    p.t(
        50,
        55,
        f"Inscrita en el Registro Mercantil de Madrid, Tomo {rng.randint(1000, 9999)}, Folio "
        f"{rng.randint(10, 99)}, Hoja M-{rng.randint(100000, 999999)}",
        6.5,
    )
    return d, p.done()


def t_at_uid(rng, i):
    """Austrian: 'UID-Nr. ATU12345678' near the number, 'Leistungsdatum', Firmenbuch, 'Gesamtbetrag EUR' header with
    bare numbers.
    """
    lang = "de"
    d = make_doc(rng, lang, mark="none")
    d["vendor"] = f"{rng.choice(W1)} {rng.choice(W2)} {rng.choice(['GmbH', 'GesmbH', 'KG', 'OG', 'e.U.'])}"
    p = Page()
    W, H = p.W, p.H
    p.t(W - 50, H - 55, d["vendor"], 14, True, "r")
    p.t(
        W - 50,
        H - 68,
        f"{rng.choice(['Mariahilfer Straße 45', 'Herrengasse 6', 'Landstraße 12'])} · "
        f"{rng.choice(['1060 Wien', '8010 Graz', '4020 Linz'])}",
        8,
        align="r",
    )
    addr_block(p, 50, H - 130, [d["buyer"], *d["b_addr"], f"UID-Nr.: ATU{rng.randint(10**7, 10**8 - 1)}"], 10, 13)

    def fd(x):
        return x.strftime("%d.%m.%Y")

    rows = [
        ("Rechnungs-Nr.", d["number"]),
        ("Rechnungsdatum", fd(d["date"])),
        ("Leistungsdatum", fd(d["deliv_date"])),
        ("Unsere UID-Nr.", f"ATU{rng.randint(10**7, 10**8 - 1)}"),
        ("Kunden-Nr.", d["cust_no"]),
    ]
    rng.shuffle(rows)
    kv_rows(p, W - 240, W - 135, H - 130, rows, 8.5)
    p.t(50, H - 230, "Rechnung", 14, True)
    y = item_table(p, d, 50, W - 50, H - 255)
    p.t(W - 50, y - 4, "EUR", 8, True, "r")
    y = kv_rows(p, W - 230, W - 50, y - 18, totals_rows(rng, d, full=False, mark="none"), 9, val_align="r")
    p.t(
        50,
        y - 10,
        f"Zahlbar bis {fd(d['due'])} ohne Abzug. Skonto 2 % bei Zahlung bis {fd(d['date'] + timedelta(days=8))}.",
        8,
    )
    p.t(
        50,
        55,
        f"FN {rng.randint(100000, 999999)}{rng.choice('abimst')} · Handelsgericht Wien · {d['bank']} · IBAN "
        f"AT{rng.randint(10, 99)} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)} "
        f"{rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
        7,
    )
    return d, p.done()


def t_seller_bottom(rng, i):
    """Seller block only at the bottom left above the footer; top carries the buyer and a title; FR 1 234,56 or EN."""
    lang = rng.choice(["fr", "fr", "en", "de"])
    d = make_doc(rng, lang)
    p = Page()
    W, H = p.W, p.H
    p.t(W - 50, H - 60, LABELS["title"][lang], 22, True, "r")
    p.t(50, H - 60, LABELS["bill_to"][lang], 8, True)
    addr_block(
        p,
        50,
        H - 74,
        [d["buyer"], d["buyer_contact"], *d["b_addr"], f"{LABELS['vat_id'][lang]} {d['buyer_vat']}"],
        10,
        13,
    )

    def fd(x):
        return fmt_date(x, lang, d["datefmt"])

    rows = [
        (pick(rng, "inv_no", lang), d["number"]),
        (pick(rng, "inv_date", lang), fd(d["date"])),
        (LABELS["due_date"][lang], fd(d["due"])),
        (pick(rng, "cust_no", lang), d["cust_no"]),
    ]
    kv_rows(p, W - 240, W - 130, H - 95, rows, 8.5)
    y = item_table(p, d, 50, W - 50, H - 200)
    y = kv_rows(p, W - 230, W - 50, y - 6, totals_rows(rng, d), 9, val_align="r")
    addr_block(
        p,
        50,
        130,
        [
            d["vendor"],
            *d["v_addr"],
            f"{LABELS['vat_id'][lang]} {d['vat_id']} · SIRET {rng.randint(10**13, 10**14 - 1)}",
        ],
        9,
        11,
        bold_first=True,
    )
    p.line(50, 72, W - 50, 72, 0.3)
    p.t(50, 60, f"{d['bank']} · IBAN {d['iban']}", 7)
    return d, p.done()


def t_proforma(rng, i):
    """Proforma invoice: 'PROFORMA INVOICE' / 'Proforma-Rechnung', number PF-…, valid-until date, quote no., advance
    payment requested.
    """
    lang = rng.choice(["en", "de", "fr", "es"])
    d = make_doc(rng, lang, paid=False)
    d["number"] = f"PF-{d['date'].year}-{rng.randint(1, 9999):04d}"
    p = Page()
    W, H = p.W, p.H
    title = {"en": "PROFORMA INVOICE", "de": "PROFORMA-RECHNUNG", "fr": "FACTURE PRO FORMA", "es": "FACTURA PROFORMA"}[
        lang
    ]
    nol = {"en": "Proforma no.", "de": "Proforma-Nr.", "fr": "Pro forma n°", "es": "Proforma nº"}[lang]
    val = {"en": "Valid until", "de": "Gültig bis", "fr": "Valable jusqu'au", "es": "Válida hasta"}[lang]
    quo = {"en": "Quotation no.", "de": "Angebots-Nr.", "fr": "Devis n°", "es": "Presupuesto nº"}[lang]
    p.t(50, H - 60, d["vendor"], 14, True)
    p.t(50, H - 73, f"{d['v_addr'][0]}, {d['v_addr'][1]}", 8)
    p.t(W - 50, H - 60, title, 15, True, "r")
    addr_block(p, 50, H - 130, [d["buyer"], *d["b_addr"]], 10, 13)

    def fd(x):
        return fmt_date(x, lang, d["datefmt"])

    rows = [
        (nol, d["number"]),
        (LABELS["inv_date"][lang][0] if lang != "en" else "Date", fd(d["date"])),
        (val, fd(d["due"])),
        (quo, f"Q-{rng.randint(1000, 9999)}"),
        (pick(rng, "order_no", lang), d["order_no"]),
    ]
    kv_rows(p, W - 240, W - 140, H - 130, rows, 8.5)
    y = item_table(p, d, 50, W - 50, H - 240)
    y = kv_rows(p, W - 230, W - 50, y - 6, totals_rows(rng, d), 9, val_align="r")
    note = {
        "en": "This is not a tax invoice. Goods ship on receipt of payment.",
        "de": "Keine Rechnung im Sinne des UStG. Lieferung nach Zahlungseingang.",
        "fr": "Document sans valeur fiscale. Expédition après paiement.",
        "es": "Documento sin validez fiscal. Envío tras el pago.",
    }[lang]
    p.t(50, y - 10, note, 8)
    footer(p, d)
    return d, p.done()


def t_reminder(rng, i):
    """Payment reminder / Mahnung: its own number and date, the older invoice's number, date and total, a fee, the
    amount now claimed.
    Truth = the reminder's own number/date and the amount claimed (original + fee).
    """
    lang = rng.choice(["de", "en", "fr", "nl"])
    d = make_doc(rng, lang, paid=False)
    orig_no, orig_date, orig_total = d["number"], d["date"] - timedelta(days=rng.randint(30, 60)), d["total"]
    fee = q(rng.choice([Decimal("5.00"), Decimal("10.00"), Decimal("15.00")]))
    d["number"] = f"M{rng.randint(10000, 99999)}"
    d["total"] = orig_total + fee
    d["orig"] = {"number": orig_no, "date": orig_date.isoformat(), "total": str(orig_total)}
    lab = {
        "de": (
            "Zahlungserinnerung",
            "1. Mahnung",
            "Mahnung Nr.",
            "Datum",
            "Rechnung Nr.",
            "Rechnungsdatum",
            "Rechnungsbetrag",
            "Mahngebühr",
            "Offener Betrag",
            "Sicher haben Sie übersehen, dass folgende Rechnung noch offen ist:",
        ),
        "en": (
            "Payment reminder",
            "Reminder",
            "Reminder no.",
            "Date",
            "Invoice no.",
            "Invoice date",
            "Invoice amount",
            "Reminder fee",
            "Total now due",
            "Our records show that the following invoice is still unpaid:",
        ),
        "fr": (
            "Relance",
            "Rappel de paiement",
            "Relance n°",
            "Date",
            "Facture n°",
            "Date de facture",
            "Montant facture",
            "Frais de relance",
            "Total dû",
            "Sauf erreur de notre part, la facture suivante reste impayée :",
        ),
        "nl": (
            "Betalingsherinnering",
            "Herinnering",
            "Herinnering nr.",
            "Datum",
            "Factuurnummer",
            "Factuurdatum",
            "Factuurbedrag",
            "Aanmaningskosten",
            "Totaal openstaand",
            "Volgens onze administratie staat de volgende factuur nog open:",
        ),
    }[lang]
    p = Page()
    W, H = p.W, p.H

    def fd(x):
        return fmt_date(x, lang, d["datefmt"])

    p.t(50, H - 60, d["vendor"], 15, True)
    p.t(50, H - 73, f"{d['v_addr'][0]} · {d['v_addr'][1]}", 8)
    addr_block(p, 50, H - 130, [d["buyer"], *d["b_addr"]], 10, 13)
    kv_rows(
        p,
        W - 240,
        W - 140,
        H - 130,
        [(lab[2], d["number"]), (lab[3], fd(d["date"])), (pick(rng, "cust_no", lang), d["cust_no"])],
        8.5,
    )
    p.t(50, H - 220, rng.choice(lab[:2]), 14, True)
    p.t(50, H - 240, lab[9], 9)
    y = H - 265
    for c, x, a in [(lab[4], 50, "l"), (lab[5], 200, "l"), (LABELS["due_date"][lang], 320, "l"), (lab[6], W - 50, "r")]:
        p.t(x, y, c, 8.5, True, a)
    y -= 14
    p.t(50, y, orig_no, 9)
    p.t(200, y, fd(orig_date), 9)
    p.t(320, y, fd(orig_date + timedelta(days=14)), 9)
    p.t(W - 50, y, money(orig_total, d), 9, align="r")
    y -= 24
    y = kv_rows(
        p,
        W - 230,
        W - 50,
        y,
        [(lab[6], money(orig_total, d)), (lab[7], money(fee, d)), (lab[8], money(d["total"], d))],
        9.5,
        val_align="r",
    )
    p.t(50, y - 10, f"{LABELS['pay_terms'][lang]} {fd(d['date'] + timedelta(days=7))}", 8)
    footer(p, d)
    return d, p.done()


def t_portal_print(rng, i):
    """A supplier-portal print: the BUYER's legal name in the page header/footer line with a print timestamp; the
    invoice below.
    """
    lang = rng.choice(["de", "en", "nl", "it"])
    d = make_doc(rng, lang)
    p = Page()
    W, H = p.W, p.H

    def fd(x):
        return fmt_date(x, lang, d["datefmt"])

    portal = {
        "de": "Lieferantenportal",
        "en": "Supplier Portal",
        "nl": "Leveranciersportaal",
        "it": "Portale fornitori",
    }[lang]
    p.t(30, H - 25, f"{d['buyer']} – {portal} – {d['printed'].isoformat()} 14:{rng.randint(10, 59)} – user j.meyer", 7)
    p.t(W - 30, H - 25, f"Doc-ID {rng.randint(10**9, 10**10 - 1)}", 7, align="r")
    p.t(50, H - 70, d["vendor"], 13, True)
    p.t(50, H - 83, f"{d['v_addr'][0]} · {d['v_addr'][1]} · {LABELS['vat_id'][lang]} {d['vat_id']}", 8)
    addr_block(p, 50, H - 130, [d["buyer"], *d["b_addr"]], 10, 13)
    rows = [
        (pick(rng, "inv_no", lang), d["number"]),
        (pick(rng, "inv_date", lang), fd(d["date"])),
        (pick(rng, "order_no", lang), d["order_no"]),
        ("Portal-ID" if lang == "de" else "Portal ID", f"SP-{rng.randint(100000, 999999)}"),
        ("Upload", fd(d["printed"])),
    ]
    kv_rows(p, W - 240, W - 140, H - 130, rows, 8.5)
    p.t(50, H - 230, LABELS["title"][lang], 14, True)
    y = item_table(p, d, 50, W - 50, H - 255)
    kv_rows(p, W - 230, W - 50, y - 6, totals_rows(rng, d), 9, val_align="r")
    p.t(30, 25, f"{d['buyer']} · {portal} · " + LABELS["page"][lang].format(a=1, b=1), 7)
    return d, p.done()


def t_uk_taxpoint(rng, i):
    """UK VAT invoice: 'Tax point' date printed before the invoice date, VAT Reg No. 'GB 123 4567 89', company no., £
    before.
    """
    lang = "en"
    d = make_doc(rng, lang, mark=rng.choice(["sym_before", "none"]), datefmt=rng.choice(["slash", "long"]))
    p = Page()
    W, H = p.W, p.H

    def fd(x):
        return fmt_date(x, lang, d["datefmt"])

    tp = d["date"] - timedelta(days=rng.randint(1, 12))
    p.t(50, H - 60, d["vendor"], 16, True)
    p.t(50, H - 74, f"{d['v_addr'][0]}, {d['v_addr'][1]}", 8)
    vrn = f"GB {rng.randint(100, 999)} {rng.randint(1000, 9999)} {rng.randint(10, 99)}"
    p.t(50, H - 86, f"VAT Reg No. {vrn}", 8)
    p.t(W - 50, H - 60, "VAT INVOICE", 14, True, "r")
    addr_block(p, 50, H - 130, ["Invoice to:", d["buyer"], *d["b_addr"]], 10, 13)
    rows = [
        ("Tax point", fd(tp)),
        ("Invoice No.", d["number"]),
        ("Invoice date", fd(d["date"])),
        ("Account", d["cust_no"]),
        ("Your order", d["order_no"]),
    ]
    if rng.random() < 0.5:
        rows[1], rows[2] = rows[2], rows[1]
    kv_rows(p, W - 230, W - 130, H - 130, rows, 8.5)
    y = item_table(p, d, 50, W - 50, H - 240, show_rate=True)
    y = kv_rows(p, W - 230, W - 50, y - 6, totals_rows(rng, d), 9, val_align="r")
    p.t(
        50,
        y - 10,
        f"Payment due {fd(d['due'])}. Sort code "
        f"{rng.randint(10, 99)}-{rng.randint(10, 99)}-{rng.randint(10, 99)} Account {rng.randint(10**7, 10**8 - 1)}",
        8,
    )
    p.t(
        50,
        55,
        f"{d['vendor']} · Registered in England and Wales No. {rng.randint(10**7, 10**8 - 1):08d} · "
        f"Registered office {d['v_addr'][0]}",
        6.5,
    )
    return d, p.done()


def t_label_right(rng, i):
    """Values on the left, their labels to the right of them ('RE-2026-00123   Rechnungsnummer'), incl. totals."""
    lang = rng.choice(["de", "en", "fr", "es", "it"])
    d = make_doc(rng, lang)
    p = Page()
    W, H = p.W, p.H

    def fd(x):
        return fmt_date(x, lang, d["datefmt"])

    p.t(50, H - 60, d["vendor"], 15, True)
    p.t(50, H - 73, f"{d['v_addr'][0]} · {d['v_addr'][1]}", 8)
    addr_block(p, 50, H - 130, [d["buyer"], *d["b_addr"]], 10, 13)
    rows = [
        (d["cust_no"], pick(rng, "cust_no", lang)),
        (d["number"], pick(rng, "inv_no", lang)),
        (fd(d["date"]), pick(rng, "inv_date", lang)),
        (fd(d["due"]), LABELS["due_date"][lang]),
        (d["order_no"], pick(rng, "order_no", lang)),
    ]
    rng.shuffle(rows)
    yy = H - 130
    for v, k in rows:
        p.t(W - 160, yy, v, 9, align="r")
        p.t(W - 150, yy, k, 7.5)
        yy -= 13
    p.t(50, H - 230, LABELS["title"][lang], 14, True)
    y = item_table(p, d, 50, W - 50, H - 255)
    for k, v in totals_rows(rng, d):
        p.t(W - 200, y - 6, v, 9, align="r")
        p.t(W - 190, y - 6, k, 8)
        y -= 13
    footer(p, d)
    return d, p.done()


def t_all_caps(rng, i):
    """Everything in capitals: vendor, labels, month abbreviations ('12 MAR 2026'), 'TOTAL DUE'."""
    lang = rng.choice(["en", "en", "de", "fr"])
    d = make_doc(rng, lang, datefmt="dot")
    d["vendor"] = d["vendor"].upper()
    d["buyer"] = d["buyer"].upper()
    p = Page()
    W, H = p.W, p.H
    mfmt = rng.random() < 0.6 and lang == "en"
    fd = (
        (lambda x: f"{x.day:02d} {ABBR['en'][x.month - 1]} {x.year}")
        if mfmt
        else (lambda x: fmt_date(x, lang, "long" if lang != "de" else "dot").upper())
    )
    p.t(50, H - 60, d["vendor"], 15, True)
    p.t(50, H - 73, f"{d['v_addr'][0]} · {d['v_addr'][1]}".upper(), 8)
    addr_block(p, 50, H - 130, [d["buyer"], *[a.upper() for a in d["b_addr"]]], 10, 13)
    rows = [
        (pick(rng, "inv_no", lang).upper(), d["number"]),
        (pick(rng, "inv_date", lang).upper(), fd(d["date"])),
        (LABELS["deliv_date"][lang].upper(), fd(d["deliv_date"])),
        (pick(rng, "cust_no", lang).upper(), d["cust_no"]),
    ]
    kv_rows(p, W - 250, W - 140, H - 130, rows, 8.5)
    p.t(50, H - 230, LABELS["title"][lang], 14, True)
    y = item_table(p, d, 50, W - 50, H - 255)
    tr = [(k.upper(), v.upper()) for k, v in totals_rows(rng, d)]
    if lang == "en":
        tr = [("TOTAL DUE" if k in ("TOTAL", "INVOICE TOTAL", "TOTAL AMOUNT") else k, v) for k, v in tr]
    kv_rows(p, W - 230, W - 50, y - 6, tr, 9, val_align="r")
    p.t(50, 80, LABELS["pay_terms"][lang].upper(), 7.5)
    p.t(50, 60, f"{d['vendor']} · {d['bank'].upper()} · IBAN {d['iban']}", 7)
    return d, p.done()


def t_title_number(rng, i):
    """The number only in the title line ('INVOICE #A-1029'), 'PO #', 'Quote #' and 'Job #' distractors; US or UK."""
    region = rng.choice(["us", "en"])
    d = make_doc(
        rng,
        "en",
        region=region,
        datefmt="us" if region == "us" else rng.choice(["long", "slash"]),
        mark=rng.choice(["sym_before", "code_after"]),
    )
    d["number"] = f"{rng.choice('ABCKS')}-{rng.randint(1000, 9999)}"
    p = Page(LETTER)
    W, H = p.W, p.H
    fd = (
        (lambda x: f"{MONTHS['en'][x.month - 1]} {x.day}, {x.year}")
        if region == "us"
        else (lambda x: fmt_date(x, "en", d["datefmt"]))
    )
    p.t(50, H - 60, f"{rng.choice(['INVOICE', 'Invoice'])} #{d['number']}", 20, True)
    p.t(50, H - 80, fd(d["date"]), 10)
    p.t(W - 50, H - 60, d["vendor"], 11, True, "r")
    p.t(W - 50, H - 72, d["v_addr"][0], 8, align="r")
    p.t(W - 50, H - 83, d["v_addr"][1], 8, align="r")
    addr_block(p, 50, H - 120, ["BILL TO", d["buyer"], *d["b_addr"]], 9.5, 12, bold_first=True)
    rows = [
        ("PO #", d["order_no"]),
        ("Quote #", f"Q-{rng.randint(1000, 9999)}"),
        ("Job #", f"{rng.randint(100, 999)}-{rng.randint(10, 99)}"),
        ("Due", fd(d["due"])),
        ("Terms", "Net 30"),
    ]
    kv_rows(p, W - 200, W - 140, H - 120, rows, 8.5)
    y = item_table(p, d, 50, W - 50, H - 220)
    y = kv_rows(p, W - 230, W - 50, y - 6, totals_rows(rng, d), 9, val_align="r")
    p.t(50, 60, f"Make all checks payable to {d['vendor']}.", 8)
    return d, p.done()


TEMPLATES = {
    f.__name__[2:]: f
    for f in (
        t_es_factura,
        t_at_uid,
        t_seller_bottom,
        t_proforma,
        t_reminder,
        t_portal_print,
        t_uk_taxpoint,
        t_label_right,
        t_all_caps,
        t_title_number,
    )
}
