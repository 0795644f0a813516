"""Round 2 of the probe templates, first part (7 of 17 layouts): see render.py."""

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
    rate_s,
    totals_rows,
)
from tests.data.probes.vocab import (
    FORMS,
    LABELS,
    MONTHS,
    RATES,
    W1,
    fmt_date,
    fmt_num,
    money,
    q,
)


def t_utility_bill(rng, i):
    """Utility/telecom bill: account no., meter no., billing period, previous balance, payments, current charges,
    amount due.
    """
    lang = rng.choice(["en", "de", "en", "de"])
    d = make_doc(rng, lang, nitems=rng.randint(2, 4), discount_pct=0, shipping=False, paid=False)
    d["vendor"] = (
        f"{rng.choice(['Stadtwerke', 'Northgrid', 'Voltaro', 'Aquaria', 'Telenova'])} "
        f"{rng.choice(['Energie', 'Energy', 'Mobile', 'Netz', 'Utilities'])} {rng.choice(FORMS[lang])}"
    )
    p = Page()
    W, H = p.W, p.H
    p.t(W - 50, H - 55, d["vendor"], 15, True, "r")
    p.t(W - 50, H - 68, f"{d['v_addr'][0]} · {d['v_addr'][1]} · Service {d['phone']}", 7.5, align="r")
    addr_block(p, 50, H - 130, [d["buyer"], *d["b_addr"]], 10, 13)
    acct = f"{rng.randint(1000, 9999)} {rng.randint(1000, 9999)} {rng.randint(10, 99)}"
    meter = f"{rng.choice(['1ESY', 'MTR-', 'ZN'])}{rng.randint(1000000, 9999999)}"
    prev = q(Decimal(rng.randint(2000, 40000)) / 100)
    pay = prev if rng.random() < 0.5 else q(prev * Decimal("0.5"))
    lab = {
        "en": {
            "title": "YOUR BILL",
            "acct": "Account number",
            "meter": "Meter no.",
            "no": "Bill number",
            "date": "Bill date",
            "per": "Billing period",
            "prev": "Previous balance",
            "pay": "Payments received – thank you",
            "cur": "Total current charges",
            "due": "Amount due",
            "by": "Please pay by",
            "read": "Meter reading on",
        },
        "de": {
            "title": "IHRE RECHNUNG",
            "acct": "Vertragskonto",
            "meter": "Zählernummer",
            "no": "Rechnungsnummer",
            "date": "Rechnungsdatum",
            "per": "Abrechnungszeitraum",
            "prev": "Saldo Vorperiode",
            "pay": "Zahlungseingang – vielen Dank",
            "cur": "Summe aktuelle Rechnung",
            "due": "Zu zahlender Betrag",
            "by": "Fällig am",
            "read": "Zählerstand vom",
        },
    }[lang]

    def fd(x):
        return fmt_date(x, lang, d["datefmt"])

    p.t(50, H - 215, lab["title"], 14, True)
    rows = [
        (lab["acct"], acct),
        (lab["meter"], meter),
        (lab["no"], d["number"]),
        (lab["date"], fd(d["date"])),
        (lab["per"], f"{fd(d['period'][0])} - {fd(d['period'][1])}"),
        (lab["read"], fd(d["period"][1])),
        (lab["by"], fd(d["due"])),
    ]
    rng.shuffle(rows)
    kv_rows(p, W - 270, W - 150, H - 120, rows, 8.5)
    due = prev - pay + d["total"]
    y = H - 250
    for k, v in [
        (lab["prev"], money(prev, d)),
        (lab["pay"], money(-pay, d)),
        (lab["cur"], money(d["total"], d)),
        (lab["due"], money(due, d)),
    ]:
        p.t(50, y, k, 10, k == lab["due"])
        p.t(W - 50, y, v, 10, k == lab["due"], "r")
        y -= 15
    p.line(50, y + 5, W - 50, y + 5)
    y = item_table(p, d, 50, W - 50, y - 20, 8.5, show_rate=True)
    y = kv_rows(p, W - 230, W - 50, y - 6, totals_rows(rng, d, full=False), 9, val_align="r")
    footer(p, d)
    return d, p.done()


def t_hotel_folio(rng, i):
    """Hotel folio: room no., arrival/departure, folio no. beside the invoice no., city tax, card payment, balance 0."""
    lang = rng.choice(["de", "fr", "it", "en"])
    d = make_doc(rng, lang, nitems=0, discount_pct=0, shipping=False, paid=False)
    d["vendor"] = f"Hotel {rng.choice(W1)} {rng.choice(FORMS[lang])}"
    nights = rng.randint(1, 6)
    arr = d["date"] - timedelta(days=nights)
    rate = q(Decimal(rng.randint(8900, 32000)) / 100)
    vat = RATES[lang][1] or RATES[lang][0]
    lines = [
        (
            arr + timedelta(days=k),
            {"de": "Übernachtung", "fr": "Nuitée", "it": "Pernottamento", "en": "Accommodation"}[lang],
            rate,
        )
        for k in range(nights)
    ]
    bf = q(Decimal(rng.choice([1450, 1800, 2200])) / 100)
    lines += [
        (
            arr + timedelta(days=k + 1),
            {"de": "Frühstück", "fr": "Petit-déjeuner", "it": "Colazione", "en": "Breakfast"}[lang],
            bf,
        )
        for k in range(nights)
    ]
    city = q(Decimal(rng.choice([250, 300, 500])) / 100 * nights)
    gross = q(sum(x[2] for x in lines))  # prices incl. VAT
    d["total"] = gross + city
    d["net"] = q(gross / (1 + Decimal(vat) / 100))
    p = Page()
    W, H = p.W, p.H
    p.t(W / 2, H - 55, d["vendor"], 17, True, "c")
    p.t(W / 2, H - 69, f"{d['v_addr'][0]} · {d['v_addr'][1]} · {d['phone']}", 8, align="c")
    guest = rng.choice(["Mr. Tobias Renner", "Mme Claire Dubois", "Sig. Marco Bellini", "Frau Anna Lenz"])
    addr_block(p, 50, H - 115, [d["buyer"], guest, *d["b_addr"]], 9.5, 12)
    fl = {
        "de": (
            "Rechnung",
            "Rechnungs-Nr.",
            "Folio-Nr.",
            "Zimmer",
            "Anreise",
            "Abreise",
            "Datum",
            "Kurtaxe",
            "Gesamt",
            "Bezahlt Kreditkarte",
            "Saldo",
            "Reservierungs-Nr.",
        ),
        "fr": (
            "Facture",
            "Facture n°",
            "Folio n°",
            "Chambre",
            "Arrivée",
            "Départ",
            "Date",
            "Taxe de séjour",
            "Total",
            "Payé carte bancaire",
            "Solde",
            "N° de réservation",
        ),
        "it": (
            "Fattura",
            "Fattura n.",
            "Folio n.",
            "Camera",
            "Arrivo",
            "Partenza",
            "Data",
            "Imposta di soggiorno",
            "Totale",
            "Pagato carta di credito",
            "Saldo",
            "N. prenotazione",
        ),
        "en": (
            "Invoice",
            "Invoice No.",
            "Folio No.",
            "Room",
            "Arrival",
            "Departure",
            "Date",
            "City tax",
            "Total",
            "Paid by credit card",
            "Balance",
            "Confirmation No.",
        ),
    }[lang]

    def fd(x):
        return fmt_date(x, lang, d["datefmt"])

    d["number"] = f"{rng.randint(100000, 999999)}"
    folio = f"{rng.randint(10000, 99999)}/{rng.randint(1, 3)}"
    rows = [
        (fl[2], folio),
        (fl[1], d["number"]),
        (fl[3], str(rng.randint(101, 620))),
        (fl[4], fd(arr)),
        (fl[5], fd(d["date"])),
        (fl[11], str(rng.randint(10000000, 99999999))),
        (fl[6], fd(d["date"])),
    ]
    kv_rows(p, W - 230, W - 130, H - 115, rows, 8.5)
    p.t(50, H - 230, fl[0], 13, True)
    y = H - 255
    for c, x, a in [
        (fl[6], 50, "l"),
        ({"de": "Leistung", "fr": "Prestation", "it": "Descrizione", "en": "Description"}[lang], 130, "l"),
        ({"de": "Betrag", "fr": "Montant", "it": "Importo", "en": "Amount"}[lang], W - 50, "r"),
    ]:
        p.t(x, y, c, 8.5, True, a)
    y -= 15
    for dt, nm, amt in sorted(lines):
        p.t(50, y, fd(dt), 8.5)
        p.t(130, y, nm, 8.5)
        p.t(W - 50, y, money(amt, d, "none"), 8.5, align="r")
        y -= 12
    p.t(50, y, fd(d["date"]), 8.5)
    p.t(130, y, f"{fl[7]} ({nights} x)", 8.5)
    p.t(W - 50, y, money(city, d, "none"), 8.5, align="r")
    y -= 18
    card = f"VISA **** {rng.randint(1000, 9999)}"
    rows = [
        (fl[8], money(d["total"], d)),
        (f"{fl[9]} {card}", money(-d["total"], d)),
        (fl[10], money(Decimal("0.00"), d)),
    ]
    y = kv_rows(p, W - 300, W - 50, y, rows, 9.5, val_align="r")
    tl = {"de": "enthaltene MwSt.", "fr": "dont TVA", "it": "di cui IVA", "en": "incl. VAT"}[lang]
    p.t(50, y - 10, f"{tl} {vat} %: {money(d['total'] - city - d['net'], d)} · Netto {money(d['net'], d)}", 8)
    footer(p, d)
    return d, p.done()


def t_saas_receipt(rng, i):
    """SaaS receipt: receipt # next to invoice #, 'Date paid', card ending 4242, 'Amount paid' equal to total."""
    cur = rng.choice(["USD", "EUR", "GBP"])
    d = make_doc(
        rng,
        "en",
        region="us",
        currency=cur,
        mark=rng.choice(["sym_before", "code_before"]),
        nitems=rng.randint(1, 3),
        discount_pct=0,
        shipping=False,
        paid=False,
        numstyle="en",
    )
    d["vendor"] = (
        f"{rng.choice(['Cloudlark', 'Pipewise', 'Notary', 'Stackly', 'Metricon'])} {rng.choice(['Inc.', 'LLC', 'Ltd'])}"
    )
    d["number"] = (
        f"{rng.choice('ABCDEFGH')}{rng.choice('ABCDEFGH')}{rng.randint(10, 99)}{rng.choice('XYZ')}"
        f"{rng.randint(100, 999)}-{rng.randint(1, 20):04d}"
    )
    rcpt = f"{rng.randint(1000, 2999)}-{rng.randint(1000, 9999)}"
    p = Page(LETTER)
    W, H = p.W, p.H
    p.t(50, H - 60, "Receipt", 22, True)
    p.t(W - 50, H - 60, d["vendor"], 12, True, "r")

    def fd(x):
        return f"{MONTHS['en'][x.month - 1]} {x.day}, {x.year}"

    rows = [
        ("Invoice number", d["number"]),
        ("Receipt number", rcpt),
        ("Date paid", fd(d["date"])),
        ("Payment method", "Visa - 4242"),
    ]
    if rng.random() < 0.5:
        rows = [rows[1], rows[0], rows[2], rows[3]]
    kv_rows(p, 50, 160, H - 95, rows, 9)
    addr_block(
        p, 50, H - 170, [d["vendor"], d["v_addr"][0], d["v_addr"][1], "support@example.com"], 8.5, 11, bold_first=True
    )
    addr_block(p, 260, H - 170, ["Bill to", d["buyer"], d["b_addr"][0], d["b_addr"][1]], 8.5, 11, bold_first=True)

    def m(x):
        return money(x, d)

    r = rng.choice([Decimal("0"), Decimal("20"), Decimal("8.875")])
    d["tax"] = q(d["net"] * r / 100)
    d["total"] = d["net"] + d["tax"]
    p.t(50, H - 240, f"{m(d['total'])} paid on {fd(d['date'])}", 15, True)
    y = H - 275
    p.t(50, y, "Description", 8, True)
    p.t(W - 200, y, "Qty", 8, True, "r")
    p.t(W - 130, y, "Unit price", 8, True, "r")
    p.t(W - 50, y, "Amount", 8, True, "r")
    y -= 14
    for it in d["items"]:
        per = f"{fd(d['date'])} – {fd(d['date'] + timedelta(days=30))}"
        p.t(50, y, f"{rng.choice(['Pro plan', 'Team seats', 'API usage', 'Storage add-on'])}", 9)
        p.t(50, y - 10, per, 7)
        p.t(W - 200, y, str(it["qty"]), 9, align="r")
        p.t(W - 130, y, m(it["price"]), 9, align="r")
        p.t(W - 50, y, m(it["amount"]), 9, align="r")
        y -= 26
    rows = [("Subtotal", m(d["net"]))]
    if r:
        rows.append((f"Tax ({r}%)" if r != 20 else "VAT (20%)", m(d["tax"])))
    rows += [("Total", m(d["total"])), ("Amount paid", m(d["total"])), ("Amount due", m(Decimal("0.00")))]
    kv_rows(p, W - 230, W - 50, y - 6, rows, 9.5, val_align="r")
    p.t(50, 60, f"Questions? Contact {d['vendor']} at support@example.com · Receipt #{rcpt}", 7)
    return d, p.done()


def t_freelancer(rng, i):
    """Freelancer (a natural person, no legal form), 'Steuernummer' and USt-IdNr., client company with a legal form."""
    lang = rng.choice(["de", "de", "en", "nl"])
    d = make_doc(rng, lang, discount_pct=0, shipping=False, paid=False, nitems=rng.randint(1, 4))
    first = rng.choice(["Jana", "Lukas", "Miriam", "Tomás", "Henrike", "Pieter", "Oliver"])
    last = rng.choice(["Köhler", "Brandstätter", "de Vries", "Albers", "Nieminen", "Hartwig"])
    d["vendor"] = f"{first} {last}"
    job = rng.choice(
        ["Grafikdesign & Illustration", "Freie Übersetzerin", "IT-Beratung", "Fotografie", "Webentwicklung"]
    )
    p = Page()
    W, H = p.W, p.H
    p.t(50, H - 60, d["vendor"], 18, False)
    p.t(50, H - 76, job, 10)
    p.t(W - 50, H - 60, d["v_addr"][0], 8.5, align="r")
    p.t(W - 50, H - 71, d["v_addr"][1], 8.5, align="r")
    p.t(W - 50, H - 82, f"{first.lower()}@{last.lower().replace(' ', '')}.example", 8.5, align="r")
    p.t(
        W - 50,
        H - 93,
        f"Steuernummer {rng.randint(10, 99)}/{rng.randint(100, 999)}/{rng.randint(10000, 99999)}",
        8.5,
        align="r",
    )
    p.t(50, H - 140, f"{d['vendor']}, {d['v_addr'][0]}, {d['v_addr'][1]}", 6.5)
    addr_block(p, 50, H - 155, [d["buyer"], d["buyer_contact"], *d["b_addr"]], 10, 13)

    def fd(x):
        return fmt_date(x, lang, d["datefmt"])

    rows = [
        (pick(rng, "inv_no", lang), d["number"]),
        (pick(rng, "inv_date", lang), fd(d["date"])),
        (LABELS["period"][lang], f"{fd(d['period'][0])} – {fd(d['period'][1])}"),
        (pick(rng, "ref", lang), d["ref"]),
    ]
    kv_rows(p, W - 250, W - 140, H - 155, rows, 8.5)
    p.t(50, H - 260, LABELS["title"][lang], 14, True)
    greet = {
        "de": "Für meine Leistungen erlaube ich mir, wie folgt zu berechnen:",
        "en": "For my services I charge as follows:",
        "nl": "Voor mijn werkzaamheden breng ik het volgende in rekening:",
    }[lang]
    p.t(50, H - 280, greet, 9)
    y = item_table(p, d, 50, W - 50, H - 305)
    y = kv_rows(p, W - 230, W - 50, y - 6, totals_rows(rng, d), 9, val_align="r")
    p.t(50, y - 12, LABELS["pay_terms"][lang], 8)
    p.t(50, y - 40, {"de": "Mit freundlichen Grüßen", "en": "Kind regards", "nl": "Met vriendelijke groet"}[lang], 9)
    p.t(50, y - 56, d["vendor"], 9)
    p.t(
        50,
        60,
        f"{d['bank']} · IBAN {d['iban']} · Kontoinhaber: {d['vendor']} · {LABELS['vat_id'][lang]} {d['vat_id']}",
        7,
    )
    return d, p.done()


def t_wholesale_pages(rng, i):
    """Wholesale: 30-55 lines over 2-3 pages, 'Summe Seite' subtotals per page, header repeated with a printed date,
    totals on the last page.
    """
    lang = rng.choice(["de", "en", "nl", "fr"])
    d = make_doc(rng, lang, nitems=rng.randint(30, 55), shipping=False, paid=False)
    p = Page()
    W, H = p.W, p.H

    def fd(x):
        return fmt_date(x, lang, d["datefmt"])

    per_page = 26
    chunks = [d["items"][k : k + per_page] for k in range(0, len(d["items"]), per_page)]
    pagesum = {"de": "Summe Seite", "en": "Page total", "nl": "Subtotaal pagina", "fr": "Total page"}[lang]
    for pi, ch in enumerate(chunks):
        p.t(50, H - 50, d["vendor"], 13 if pi == 0 else 9, True)
        p.t(W - 50, H - 50, LABELS["page"][lang].format(a=pi + 1, b=len(chunks)), 8, align="r")
        p.t(W - 50, H - 61, f"{LABELS['printed'][lang]} {fd(d['printed'])}", 7, align="r")
        if pi == 0:
            addr_block(p, 50, H - 110, [d["buyer"], *d["b_addr"]], 10, 13)
            rows = [
                (pick(rng, "inv_no", lang), d["number"]),
                (pick(rng, "inv_date", lang), fd(d["date"])),
                (pick(rng, "cust_no", lang), d["cust_no"]),
                (pick(rng, "dn_no", lang), d["dn_no"]),
                (LABELS["deliv_date"][lang], fd(d["deliv_date"])),
                (pick(rng, "order_no", lang), d["order_no"]),
            ]
            kv_rows(p, W - 250, W - 140, H - 110, rows, 8.5)
            p.t(50, H - 210, LABELS["title"][lang], 14, True)
            y0 = H - 235
        else:
            p.t(50, H - 75, f"{pick(rng, 'inv_no', lang)} {d['number']} · {d['buyer']}", 8)
            y0 = H - 100
        y = item_table(p, d, 50, W - 50, y0, 8, rows=ch, start_pos=pi * per_page + 1)
        s = q(sum(it["amount"] for it in ch))
        if pi < len(chunks) - 1:
            p.t(W - 200, y - 4, pagesum, 8.5)
            p.t(W - 50, y - 4, fmt_num(s, d["numstyle"]), 8.5, align="r")
            p.t(50, 40, d["vendor"] + " · " + d["v_addr"][1], 7)
            p.page()
    y = kv_rows(p, W - 230, W - 50, y - 6, totals_rows(rng, d), 9, val_align="r")
    footer(p, d)
    return d, p.done()


def t_nl_box(rng, i):
    """Dutch: a right-hand bordered box with labels in a row and values under them: Factuurnummer | Debiteurnummer |
    Factuurdatum.
    """
    lang = "nl"
    d = make_doc(rng, lang, mark=rng.choice(["sym_before", "none", "code_before"]))
    p = Page()
    W, H = p.W, p.H
    p.t(50, H - 60, d["vendor"], 15, True)
    p.t(50, H - 73, f"{d['v_addr'][0]} · {d['v_addr'][1]} · KvK {rng.randint(10000000, 99999999)}", 8)
    addr_block(p, 50, H - 130, [d["buyer"], "t.a.v. Crediteurenadministratie", *d["b_addr"]], 10, 13)
    deb = str(rng.randint(10000, 99999))

    def fd(x):
        return fmt_date(x, lang, d["datefmt"])

    cols = [
        ("Factuurnummer", d["number"]),
        ("Debiteurnummer", deb),
        ("Factuurdatum", fd(d["date"])),
        ("Vervaldatum", fd(d["due"])),
    ]
    if rng.random() < 0.5:
        cols[0], cols[1] = cols[1], cols[0]
    x0, bw = W - 330, 70
    p.rect(x0 - 4, H - 250, len(cols) * bw + 4, 34)
    for j, (k, v) in enumerate(cols):
        p.t(x0 + j * bw, H - 228, k, 7, True)
        p.t(x0 + j * bw, H - 243, v, 8.5)
    p.t(50, H - 245, "FACTUUR", 14, True)
    p.t(50, H - 270, f"Uw ordernummer: {d['order_no']} · Pakbon: {d['dn_no']}", 8.5)
    y = item_table(p, d, 50, W - 50, H - 295)
    rows = [("Totaal excl. BTW", money(d["net"], d))] + [
        (LABELS["tax"][lang].format(r=rate_s(r, d)), money(t, d)) for r, _, t in d["taxes"]
    ]
    rows.append((rng.choice(["Totaal incl. BTW", "Te betalen"]), money(d["total"], d)))
    kv_rows(p, W - 230, W - 50, y - 6, rows, 9, val_align="r")
    p.t(
        50,
        90,
        f"Graag binnen 30 dagen overmaken op {d['iban']} o.v.v. factuurnummer {d['number']} en debiteurnummer {deb}.",
        7.5,
    )
    footer(p, d)
    return d, p.done()


def t_it_fattura(rng, i):
    """Italian 'Fattura n. 123/2026 del 12/03/2026' on one line; Cedente/Cessionario blocks each with P.IVA and Codice
    Fiscale.
    """
    lang = "it"
    d = make_doc(rng, lang, datefmt="slash", mark=rng.choice(["sym_before", "sym_after", "code_after", "none"]))
    d["number"] = rng.choice(
        [
            f"{rng.randint(1, 999)}/{d['date'].year}",
            f"{rng.randint(1, 999)}/PA",
            f"FPR {rng.randint(1, 99)}/{d['date'].year % 100}",
        ]
    )
    p = Page()
    W, H = p.W, p.H

    def cf():
        return (
            "".join(rng.choice("BCDFGLMNPRSTVZ") for _ in range(6))
            + f"{rng.randint(40, 99)}{rng.choice('ABCDEHLMPRST')}{rng.randint(10, 70)}"
            f"{rng.choice('FHLM')}{rng.randint(100, 999)}{rng.choice('ABCXYZ')}"
        )

    piva_s, piva_b = f"{rng.randint(10**10, 10**11 - 1)}", f"{rng.randint(10**10, 10**11 - 1)}"
    p.t(50, H - 55, "CEDENTE / PRESTATORE", 7, True)
    addr_block(
        p,
        50,
        H - 70,
        [d["vendor"], *d["v_addr"], f"P.IVA {piva_s}", f"Codice Fiscale {cf() if rng.random() < 0.5 else piva_s}"],
        9,
        11,
        bold_first=True,
    )
    p.t(320, H - 55, "CESSIONARIO / COMMITTENTE", 7, True)
    addr_block(
        p,
        320,
        H - 70,
        [
            d["buyer"],
            *d["b_addr"],
            f"P.IVA {piva_b}",
            f"C.F. {cf()}",
            f"Codice destinatario {rng.choice(['M5UXCR1', 'KRRH6B9', '0000000'])}",
        ],
        9,
        11,
        bold_first=True,
    )

    def fd(x):
        return x.strftime("%d/%m/%Y")

    p.t(50, H - 170, f"Fattura n. {d['number']} del {fd(d['date'])}", 12, True)
    p.t(
        50,
        H - 186,
        f"DDT n. {rng.randint(100, 999)} del {fd(d['deliv_date'])} · Ordine n. {d['order_no']} del "
        f"{fd(d['order_date'])}",
        8,
    )
    y = item_table(p, d, 50, W - 50, H - 215, show_rate=True)
    rows = [("Totale imponibile", money(d["net"], d))] + [
        (f"IVA {r}% su {fmt_num(b, 'de')}", money(t, d)) for r, b, t in d["taxes"]
    ]
    rows.append(("Totale documento", money(d["total"], d)))
    y = kv_rows(p, W - 260, W - 50, y - 6, rows, 9, val_align="r")
    p.t(
        50,
        y - 10,
        f"Scadenza {fd(d['due'])} · Bonifico su IBAN IT{rng.randint(10, 99)} "
        f"X{rng.randint(10**9, 10**10 - 1)} · {d['bank']}",
        8,
    )
    p.t(50, 55, f"{d['vendor']} · Cap. soc. € 10.000,00 i.v. · REA MI-{rng.randint(100000, 999999)}", 7)
    return d, p.done()


TEMPLATES = {
    f.__name__[2:]: f
    for f in (
        t_utility_bill,
        t_hotel_folio,
        t_saas_receipt,
        t_freelancer,
        t_wholesale_pages,
        t_nl_box,
        t_it_fattura,
    )
}
