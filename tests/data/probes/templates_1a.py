"""Round 1 of the probe templates, first part (12 of 22 layouts): see render.py."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from reportlab.lib.pagesizes import A4, LETTER

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
    LABELS,
    RATES,
    W1,
    fmt_date,
    fmt_num,
    money,
    q,
)


def t_classic(rng, i):
    """DIN-letter style: letterhead, window, right info block with right-aligned labels, bank footer."""
    lang = rng.choice(["de", "de", "en", "nl", "it", "es"])
    d = make_doc(rng, lang)
    p = Page()
    W, H = p.W, p.H
    p.t(50, H - 60, d["vendor"], 16, True)
    p.t(50, H - 74, f"{d['v_addr'][0]} · {d['v_addr'][1]}", 8)
    p.t(50, H - 140, f"{d['vendor']} · {d['v_addr'][0]} · {d['v_addr'][1]}", 6)
    y = H - 155
    for s in [d["buyer"], d["buyer_contact"], *d["b_addr"]]:
        p.t(50, y, s, 10)
        y -= 13
    rows = [
        (pick(rng, "inv_no", lang) + ":", d["number"]),
        (pick(rng, "inv_date", lang) + ":", fmt_date(d["date"], lang, d["datefmt"])),
        (pick(rng, "cust_no", lang) + ":", d["cust_no"]),
        (pick(rng, "order_no", lang) + ":", d["order_no"]),
        (LABELS["order_date"][lang] + ":", fmt_date(d["order_date"], lang, d["datefmt"])),
        (pick(rng, "dn_no", lang) + ":", d["dn_no"]),
        (LABELS["deliv_date"][lang] + ":", fmt_date(d["deliv_date"], lang, d["datefmt"])),
        ("Tel.:", d["phone"]),
    ]
    rng.shuffle(rows)
    kv_rows(p, W - 150, W - 145, H - 140, rows, 8.5, label_align="r")
    p.t(50, H - 270, LABELS["title"][lang], 14, True)
    y = item_table(p, d, 50, W - 50, H - 300)
    y = kv_rows(p, W - 150, W - 50, y - 6, totals_rows(rng, d), 9, label_align="r", val_align="r", bold_last=False)
    p.t(
        50,
        y - 10,
        LABELS["pay_terms"][lang] + " " + LABELS["due_date"][lang] + ": " + fmt_date(d["due"], lang, d["datefmt"]),
        8,
    )
    footer(p, d)
    return d, p.done()


def t_billto_big(rng, i):
    """The buyer block printed large under 'Bill to'; the seller small at the right and in the footer."""
    lang = rng.choice(["en", "en", "de", "fr"])
    d = make_doc(rng, lang)
    p = Page(LETTER if lang == "en" else A4)
    W, H = p.W, p.H
    p.t(50, H - 55, LABELS["title"][lang], 11, True)
    p.t(50, H - 85, LABELS["bill_to"][lang].upper(), 8, True)
    p.t(50, H - 108, d["buyer"], 20, True)
    p.t(50, H - 124, d["b_addr"][0] + ", " + d["b_addr"][1], 9)
    p.t(50, H - 136, f"{LABELS['vat_id'][lang]} {d['buyer_vat']}", 8)
    y = H - 55
    for s, sz, b in [
        (d["vendor"], 9, True),
        (d["v_addr"][0], 8, False),
        (d["v_addr"][1], 8, False),
        (d["phone"], 8, False),
    ]:
        p.t(W - 50, y, s, sz, b, "r")
        y -= 11
    rows = [
        (pick(rng, "inv_no", lang), d["number"]),
        (pick(rng, "inv_date", lang), fmt_date(d["date"], lang, d["datefmt"])),
        (LABELS["due_date"][lang], fmt_date(d["due"], lang, d["datefmt"])),
        (pick(rng, "ref", lang), d["ref"]),
        (pick(rng, "order_no", lang), d["order_no"]),
    ]
    y = H - 175
    x = 50
    for k, v in rows:  # labels above values, one row
        p.t(x, y, k, 7.5, True)
        p.t(x, y - 12, v, 9)
        x += 105
    y = item_table(p, d, 50, W - 50, H - 220, 9)
    kv_rows(p, W - 200, W - 50, y - 6, totals_rows(rng, d), 10, val_align="r")
    p.t(
        W / 2,
        50,
        f"{d['vendor']} · {LABELS['vat_id'][lang]} {d['vat_id']} · {d['bank']} · IBAN {d['iban']}",
        6.5,
        align="c",
    )
    return d, p.done()


def t_marketplace(rng, i):
    """Marketplace invoice: platform logo big, 'Sold by X', 'Fulfilled by Y', paid via PayPal."""
    lang = rng.choice(["en", "de", "fr", "it", "es"])
    d = make_doc(rng, lang, paid=False, shipping=True)
    platform = rng.choice(["Marktwerk", "ShopHub", "Bazario", "Kaufnett"]) + " Marketplace"
    fulfil = rng.choice(W1) + " Fulfilment Services GmbH"
    p = Page()
    W, H = p.W, p.H
    p.t(50, H - 65, platform, 24, True)
    sold = {"en": "Sold by", "de": "Verkauft von", "fr": "Vendu par", "it": "Venduto da", "es": "Vendido por"}[lang]
    ful = {"en": "fulfilled by", "de": "versandt durch", "fr": "expédié par", "it": "spedito da", "es": "enviado por"}[
        lang
    ]
    y = H - 100
    p.t(50, y, f"{sold} {d['vendor']}, {ful} {fulfil}", 9)
    p.t(50, y - 12, f"{LABELS['vat_id'][lang]} {d['vat_id']}  ·  {d['v_addr'][0]}, {d['v_addr'][1]}", 8)
    rows = [
        (pick(rng, "inv_no", lang), d["number"]),
        (pick(rng, "inv_date", lang), fmt_date(d["date"], lang, d["datefmt"])),
        (
            {"en": "Order #", "de": "Bestellnr.", "fr": "Commande n°", "it": "Ordine n.", "es": "Pedido nº"}[lang],
            "302-" + str(rng.randint(1000000, 9999999)) + "-" + str(rng.randint(1000000, 9999999)),
        ),
        (LABELS["order_date"][lang], fmt_date(d["order_date"], lang, d["datefmt"])),
    ]
    kv_rows(p, W - 260, W - 150, H - 140, rows, 9)
    yb = H - 140
    p.t(50, yb, LABELS["bill_to"][lang], 8, True)
    for j, s in enumerate([d["buyer"], *d["b_addr"]]):
        p.t(50, yb - 12 - j * 11, s, 9)
    pay = {
        "en": "Payment method",
        "de": "Zahlungsart",
        "fr": "Mode de paiement",
        "it": "Metodo di pagamento",
        "es": "Forma de pago",
    }[lang]
    p.t(50, H - 210, f"{pay}: PayPal — via PayPal (Europe) S.à r.l. et Cie, S.C.A.", 8)
    y = item_table(p, d, 50, W - 50, H - 240, 8.5, show_rate=True)
    tot = totals_rows(rng, d, full=False)
    y = kv_rows(p, W - 220, W - 50, y - 6, tot, 9, val_align="r")
    paidl = {
        "en": "Paid via PayPal",
        "de": "Bezahlt über PayPal",
        "fr": "Payé via PayPal",
        "it": "Pagato con PayPal",
        "es": "Pagado con PayPal",
    }[lang]
    kv_rows(p, W - 220, W - 50, y, [(paidl, money(d["total"], d))], 9, val_align="r")
    p.t(
        50,
        60,
        f"{platform} is operated by {rng.choice(W1)} Commerce S.à r.l., 38 avenue J.F. Kennedy, L-1855 Luxembourg",
        6.5,
    )
    p.t(50, 50, f"{d['vendor']} · {d['bank']} · IBAN {d['iban']}", 6.5)
    return d, p.done()


def t_credit(rng, i):
    """Credit note with negative amounts and the original invoice's number and date."""
    lang = rng.choice(["de", "en", "fr", "nl", "it"])
    d = make_doc(rng, lang, paid=False, nitems=rng.randint(1, 3), shipping=False, discount_pct=0)
    d["sign"] = -1
    orig = d["number"][:-2] + str(rng.randint(10, 99))
    orig_date = d["date"] - timedelta(days=rng.randint(5, 60))
    d["number"] = "GS-" + d["number"] if rng.random() < 0.5 else d["number"]
    p = Page()
    W, H = p.W, p.H
    p.t(W - 50, H - 60, d["vendor"], 13, True, "r")
    p.t(W - 50, H - 73, d["v_addr"][0] + " | " + d["v_addr"][1], 8, align="r")
    y = addr_block(p, 50, H - 140, [d["buyer"], *d["b_addr"]], 10, 13)
    p.t(50, H - 220, LABELS["credit"][lang], 16, True)
    orig_l = {
        "en": "Relating to invoice no.",
        "de": "Bezug: Rechnung Nr.",
        "fr": "Se rapportant à la facture n°",
        "nl": "Betreft factuur nr.",
        "it": "Rif. fattura n.",
    }[lang]
    of = {"en": "of", "de": "vom", "fr": "du", "nl": "van", "it": "del"}[lang]
    rows = [
        (pick(rng, "cn_no", lang), d["number"]),
        (pick(rng, "inv_date", lang), fmt_date(d["date"], lang, d["datefmt"])),
        (orig_l, f"{orig} {of} {fmt_date(orig_date, lang, d['datefmt'])}"),
        (pick(rng, "cust_no", lang), d["cust_no"]),
    ]
    kv_rows(p, 50, 210, H - 245, rows, 9)
    y = item_table(p, d, 50, W - 50, H - 330)
    kv_rows(p, W - 220, W - 50, y - 6, totals_rows(rng, d), 9, val_align="r")
    footer(p, d)
    return d, p.done()


def t_two_page(rng, i):
    """Two pages: many items on page 1 with a carried-forward sum, the totals on page 2."""
    lang = rng.choice(["de", "en", "fr", "nl", "es"])
    d = make_doc(rng, lang, nitems=rng.randint(26, 34))
    p = Page()
    W, H = p.W, p.H

    def head(pg):
        p.t(50, H - 50, d["vendor"], 12, True)
        p.t(W - 50, H - 50, LABELS["page"][lang].format(a=pg, b=2), 8, align="r")

    head(1)
    y = addr_block(p, 50, H - 110, [d["buyer"], *d["b_addr"]], 10, 13)
    rows = [
        (pick(rng, "inv_no", lang), d["number"]),
        (pick(rng, "inv_date", lang), fmt_date(d["date"], lang, d["datefmt"])),
        (LABELS["deliv_date"][lang], fmt_date(d["deliv_date"], lang, d["datefmt"])),
        (pick(rng, "contract", lang), d["contract"]),
    ]
    kv_rows(p, W - 250, W - 140, H - 110, rows, 9)
    p.t(50, H - 190, LABELS["title"][lang], 14, True)
    first = d["items"][:22]
    y = item_table(p, d, 50, W - 50, H - 215, 8.5, rows=first)
    carried = q(sum(it["amount"] for it in first))
    p.t(W - 150, y, LABELS["carry"][lang], 9, True, "r")
    p.t(W - 50, y, money(carried, d), 9, True, "r")
    footer(p, d, cols=2)
    p.page()
    head(2)
    p.t(50, H - 80, f"{pick(rng, 'inv_no', lang)} {d['number']}", 8)
    p.t(W - 150, H - 110, LABELS["carry"][lang], 9, True, "r")
    p.t(W - 50, H - 110, money(carried, d), 9, True, "r")
    y = item_table(p, d, 50, W - 50, H - 135, 8.5, rows=d["items"][22:], start_pos=23)
    kv_rows(p, W - 220, W - 50, y - 6, totals_rows(rng, d), 9, val_align="r")
    footer(p, d, cols=3)
    return d, p.done()


def t_swiss_fx(rng, i):
    """Swiss invoice in CHF with 1'234.56, MWST 8.1/2.6 and the total converted to EUR."""
    lang = rng.choice(["de", "fr", "en"])
    d = make_doc(rng, lang, region="ch", mark=rng.choice(["code_before", "code_after", "none"]))
    p = Page()
    W, H = p.W, p.H
    p.t(50, H - 60, d["vendor"], 14, True)
    p.t(50, H - 73, f"{d['v_addr'][0]}, CH-{d['v_addr'][1]}", 8)
    p.t(50, H - 84, f"UID {d['vat_id'][:3]}-{d['vat_id'][3:6]}.{d['vat_id'][6:9]}.{d['vat_id'][9:12]} MWST", 8)
    y = H - 130
    for s in [d["buyer"], *d["b_addr"]]:
        p.t(W - 250, y, s, 10)
        y -= 13
    p.t(50, H - 200, LABELS["title"][lang] + " " + d["number"], 14, True)
    rows = [
        (
            LABELS["inv_date"][lang][0] if isinstance(LABELS["inv_date"][lang], list) else "",
            fmt_date(d["date"], lang, "dot"),
        ),
        (pick(rng, "cust_no", lang), d["cust_no"]),
        (LABELS["due_date"][lang], fmt_date(d["due"], lang, "dot")),
        (pick(rng, "order_no", lang), d["order_no"]),
    ]
    d["datefmt"] = "dot"
    kv_rows(p, 50, 170, H - 222, rows, 9)
    if d["mark"] == "none":  # amounts printed bare, the currency stated once in a note
        p.t(
            50,
            H - 285,
            {"de": "Alle Beträge in CHF", "fr": "Tous les montants en CHF", "en": "All amounts in CHF"}[lang],
            8,
        )
    y = item_table(p, d, 50, W - 50, H - 300)
    tr = totals_rows(rng, d)
    y = kv_rows(p, W - 230, W - 50, y - 6, tr, 9, val_align="r")
    rate = Decimal(rng.choice(["1.0612", "1.0487", "1.0733"]))
    eur = q(d["total"] * rate)
    conv = {
        "de": f"Gegenwert in EUR (Kurs {rate})",
        "fr": f"Contre-valeur EUR (cours {rate})",
        "en": f"Equivalent in EUR (rate {rate})",
    }[lang]
    eur_s = "EUR " + fmt_num(eur, "ch")
    p.t(W - 230, y - 4, conv, 8)
    p.t(W - 50, y - 4, eur_s, 8, align="r")
    footer(p, d)
    return d, p.done()


def t_service_period(rng, i):
    """Subscription/utility bill: contract no., service period, print date, due date, two columns of header data."""
    lang = rng.choice(["de", "en", "fr", "nl", "it", "es"])
    d = make_doc(rng, lang, nitems=rng.randint(2, 4), shipping=False, discount_pct=0)
    p = Page()
    W, H = p.W, p.H
    p.t(50, H - 50, f"{LABELS['printed'][lang]}: {fmt_date(d['printed'], lang, d['datefmt'])}", 7)
    p.t(W - 50, H - 60, d["vendor"], 18, True, "r")
    p.t(W - 50, H - 75, f"{d['v_addr'][0]}, {d['v_addr'][1]} · Tel. {d['phone']}", 8, align="r")
    y = H - 130
    for s in [d["buyer"], d["buyer_contact"], *d["b_addr"]]:
        p.t(50, y, s, 10)
        y -= 13
    a, b = d["period"]
    left = [
        (pick(rng, "contract", lang), d["contract"]),
        (pick(rng, "cust_no", lang), d["cust_no"]),
        (LABELS["period"][lang], f"{fmt_date(a, lang, 'dot')} – {fmt_date(b, lang, 'dot')}"),
    ]
    right = [
        (pick(rng, "inv_no", lang), d["number"]),
        (pick(rng, "inv_date", lang), fmt_date(d["date"], lang, d["datefmt"])),
        (LABELS["due_date"][lang], fmt_date(d["due"], lang, d["datefmt"])),
    ]
    if rng.random() < 0.5:
        left, right = right, left
    kv_rows(p, 50, 165, H - 220, left, 9)
    kv_rows(p, 320, 440, H - 220, right, 9)
    y = item_table(p, d, 50, W - 50, H - 300, 9, show_rate=True)
    tr = totals_rows(rng, d)
    y = kv_rows(p, W - 230, W - 50, y - 6, tr, 9, val_align="r")
    p.t(50, y - 10, LABELS["pay_terms"][lang], 8)
    footer(p, d)
    return d, p.done()


def t_label_grid(rng, i):
    """A row of small labels over values with the number among customer/order numbers; right-aligned totals in large
    type.
    """
    lang = rng.choice(["en", "de", "fr", "nl", "it", "es"])
    d = make_doc(rng, lang)
    p = Page()
    W, H = p.W, p.H
    p.t(50, H - 60, d["vendor"], 13, True)
    p.t(W - 50, H - 60, LABELS["title"][lang], 22, True, "r")
    p.t(50, H - 73, d["v_addr"][0], 8)
    p.t(50, H - 83, d["v_addr"][1], 8)
    p.t(50, H - 93, f"{LABELS['vat_id'][lang]} {d['vat_id']}", 8)
    cells = [
        (pick(rng, "cust_no", lang), d["cust_no"]),
        (pick(rng, "inv_no", lang), d["number"]),
        (pick(rng, "order_no", lang), d["order_no"]),
        (pick(rng, "inv_date", lang), fmt_date(d["date"], lang, d["datefmt"])),
        (LABELS["deliv_date"][lang], fmt_date(d["deliv_date"], lang, d["datefmt"])),
    ]
    rng.shuffle(cells)
    x = 50
    y = H - 130
    step = (W - 100) / len(cells)
    p.line(50, y + 12, W - 50, y + 12)
    for k, v in cells:
        p.t(x, y, k, 7)
        p.t(x, y - 13, v, 9.5, True)
        x += step
    p.line(50, y - 20, W - 50, y - 20)
    yb = H - 170
    p.t(50, yb, LABELS["bill_to"][lang], 8, True)
    p.t(300, yb, LABELS["ship_to"][lang], 8, True)
    for j, s in enumerate([d["buyer"], *d["b_addr"]]):
        p.t(50, yb - 13 - j * 12, s, 9.5)
        p.t(300, yb - 13 - j * 12, s, 9.5)
    y = item_table(p, d, 50, W - 50, H - 250, 8.5)
    tr = totals_rows(rng, d)
    y = kv_rows(p, W - 160, W - 50, y - 10, tr[:-3] if len(tr) > 3 else tr, 9, label_align="r", val_align="r")
    for k, v in tr[-3:] if len(tr) > 3 else []:
        p.t(W - 160, y, k, 12, True, "r")
        p.t(W - 50, y, v, 12, True, "r")
        y -= 17
    footer(p, d)
    return d, p.done()


def t_big_lines(rng, i):
    """Project invoice: list prices with a large project discount, line totals larger than the invoice total."""
    lang = rng.choice(["de", "en", "fr", "it"])
    d = make_doc(rng, lang, big=True, discount_pct=rng.choice([40, 50, 60]), paid=False, shipping=False)
    p = Page()
    W, H = p.W, p.H
    p.t(50, H - 55, d["vendor"], 15, True)
    p.t(50, H - 68, f"{d['v_addr'][0]} · {d['v_addr'][1]}", 8)
    y = addr_block(p, 50, H - 110, [d["buyer"], *d["b_addr"]], 10, 13)
    rows = [
        (pick(rng, "inv_no", lang), d["number"]),
        (pick(rng, "inv_date", lang), fmt_date(d["date"], lang, d["datefmt"])),
        (pick(rng, "order_no", lang), d["order_no"]),
        (pick(rng, "contract", lang), d["contract"]),
    ]
    kv_rows(p, W - 240, W - 135, H - 110, rows, 9)
    y = item_table(p, d, 50, W - 50, H - 200, 9)
    lst = {"en": "Total list price", "de": "Summe Listenpreise", "fr": "Total prix catalogue", "it": "Totale listino"}[
        lang
    ]
    p.t(W - 160, y, lst, 9, True, "r")
    p.t(W - 50, y, money(d["net_lines"], d), 9, True, "r")
    y -= 16
    proj = {"en": "Project discount", "de": "Projektrabatt", "fr": "Remise projet", "it": "Sconto progetto"}[lang]
    rows = [
        (f"{proj} {d['discount_pct']} %", money(-d["discount"], d)),
        (pick(rng, "subtotal", lang), money(d["net"], d)),
    ]
    rows += [(LABELS["tax"][lang].format(r=rate_s(r, d)), money(t, d)) for r, _, t in d["taxes"]]
    rows += [(pick(rng, "total", lang), money(d["total"], d))]
    kv_rows(p, W - 160, W - 50, y, rows, 9, label_align="r", val_align="r")
    footer(p, d)
    return d, p.done()


def t_us_fx(rng, i):
    """US vendor in USD with '$1,234.56', sales tax, and the total restated in EUR."""
    d = make_doc(rng, "en", region="us", mark="sym_before", datefmt="us", discount_pct=0)
    d["lang"] = "en"
    p = Page(LETTER)
    W, H = p.W, p.H
    p.t(50, H - 55, d["vendor"], 17, True)
    p.t(50, H - 70, f"{d['v_addr'][0]}, {d['v_addr'][1]}", 8)
    p.t(
        50,
        H - 81,
        f"Phone (415) {rng.randint(200, 999)}-{rng.randint(1000, 9999)} · EIN "
        f"{rng.randint(10, 99)}-{rng.randint(1000000, 9999999)}",
        8,
    )
    p.t(W - 50, H - 55, "INVOICE", 20, True, "r")
    rows = [
        ("Invoice #", d["number"]),
        ("Date", fmt_date(d["date"], "en", "us")),
        ("PO #", d["order_no"]),
        ("Terms", "Net 30"),
        ("Due Date", fmt_date(d["due"], "en", "us")),
    ]
    kv_rows(p, W - 200, W - 50, H - 85, rows, 9, val_align="r")
    p.t(50, H - 170, "BILL TO", 8, True)
    for j, s in enumerate([d["buyer"], *d["b_addr"]]):
        p.t(50, H - 183 - j * 12, s, 9.5)
    y = item_table(p, d, 50, W - 50, H - 250, 9)
    rows = [("Subtotal", money(d["net_lines"], d))]
    if d["shipping"]:
        rows.append(("Shipping & handling", money(d["shipping"], d)))
    d["taxes"] = [(RATES["us"][0], d["net"], q(d["net"] * RATES["us"][0] / 100))]
    d["tax"] = d["taxes"][0][2]
    d["total"] = d["net"] + d["tax"]
    d["amount_due"] = d["total"] - d["paid"]
    rows.append(("Sales tax (8.625%)", money(d["tax"], d)))
    rows.append(("Total", money(d["total"], d)))
    if d["paid"]:
        rows += [("Payment received", money(-d["paid"], d)), ("Balance due", money(d["amount_due"], d))]
    y = kv_rows(p, W - 200, W - 50, y - 6, rows, 9.5, val_align="r")
    rate = Decimal("0.9213")
    p.t(W - 200, y - 6, f"Total in EUR (at {rate}): €{fmt_num(q(d['total'] * rate), 'en')}", 8)
    p.t(50, 60, f"Wire: {d['bank']} · ABA 026009593 · Acct 4481 2290 17", 7)
    return d, p.done()


def t_fr_space(rng, i):
    """French facture: 1 234,56 €, SIRET, acompte, net à payer, capital social in the footer."""
    d = make_doc(rng, "fr", numstyle="fr", mark=rng.choice(["sym_after", "none", "code_after"]))
    p = Page()
    W, H = p.W, p.H
    p.t(50, H - 60, d["vendor"], 14, True)
    p.t(50, H - 73, d["v_addr"][0], 8)
    p.t(50, H - 83, d["v_addr"][1], 8)
    p.t(
        50,
        H - 93,
        f"SIRET {rng.randint(100, 999)} {rng.randint(100, 999)} {rng.randint(100, 999)} {rng.randint(10000, 99999)}",
        8,
    )
    y = H - 130
    p.t(320, y + 14, LABELS["bill_to"]["fr"], 8, True)
    for s in [d["buyer"], d["buyer_contact"], *d["b_addr"]]:
        p.t(320, y, s, 10)
        y -= 13
    p.t(50, H - 220, f"FACTURE N° {d['number']}", 14, True)
    rows = [
        ("Date de facture :", fmt_date(d["date"], "fr", d["datefmt"])),
        ("Date d'échéance :", fmt_date(d["due"], "fr", d["datefmt"])),
        ("N° de commande :", d["order_no"]),
        ("N° client :", d["cust_no"]),
    ]
    kv_rows(p, 50, 160, H - 242, rows, 9)
    y = item_table(p, d, 50, W - 50, H - 320, 9, show_rate=True)
    y = kv_rows(p, W - 230, W - 50, y - 6, totals_rows(rng, d), 9, val_align="r")
    p.t(
        50,
        70,
        f"{d['vendor']} au capital de 10 000 € · RCS Lyon B {rng.randint(100, 999)} {rng.randint(100, 999)} "
        f"{rng.randint(100, 999)}",
        7,
    )
    p.t(50, 60, f"{LABELS['vat_id']['fr']} {d['vat_id']} · {d['bank']} · IBAN {d['iban']}", 7)
    p.t(50, 50, "En cas de retard de paiement, indemnité forfaitaire pour frais de recouvrement : 40,00 €", 6.5)
    return d, p.done()


def t_it_es_compact(rng, i):
    """Italian/Spanish compact invoice: seller and buyer side by side with 'Cedente'/'Emisor' labels, small fonts."""
    lang = rng.choice(["it", "es"])
    d = make_doc(rng, lang)
    p = Page()
    W, H = p.W, p.H
    sl = {"it": "Cedente / Prestatore", "es": "Emisor"}[lang]
    bl = {"it": "Cessionario / Committente", "es": "Cliente"}[lang]
    p.t(50, H - 50, f"{sl}:", 7, True)
    p.t(300, H - 50, f"{bl}:", 7, True)
    for j, (a, b) in enumerate(
        zip(
            [d["vendor"], *d["v_addr"], f"{LABELS['vat_id'][lang]} {d['vat_id']}"],
            [d["buyer"], *d["b_addr"], f"{LABELS['vat_id'][lang]} {d['buyer_vat']}"],
            strict=False,
        )
    ):
        p.t(50, H - 62 - j * 10, a, 7.5, j == 0)
        p.t(300, H - 62 - j * 10, b, 11 if j == 0 else 7.5, j == 0)
    p.t(50, H - 120, f"{LABELS['title'][lang]}", 11, True)
    rows = [
        (pick(rng, "inv_no", lang), d["number"]),
        (pick(rng, "inv_date", lang), fmt_date(d["date"], lang, d["datefmt"])),
        (pick(rng, "dn_no", lang), d["dn_no"]),
        (LABELS["deliv_date"][lang], fmt_date(d["deliv_date"], lang, d["datefmt"])),
        (pick(rng, "order_no", lang), d["order_no"]),
        (LABELS["order_date"][lang], fmt_date(d["order_date"], lang, d["datefmt"])),
    ]
    x = 50
    for k, v in rows[:3]:
        p.t(x, H - 138, f"{k}: {v}", 7)
        x += 170
    x = 50
    for k, v in rows[3:]:
        p.t(x, H - 149, f"{k}: {v}", 7)
        x += 170
    if rng.random() < 0.5:  # swap a distractor row first
        pass
    y = item_table(p, d, 50, W - 50, H - 180, 7, show_rate=True)
    y = kv_rows(p, W - 200, W - 50, y - 6, totals_rows(rng, d), 7.5, val_align="r")
    p.t(50, 50, f"{d['bank']} · IBAN {d['iban'].replace('DE', 'IT', 1)} · Tel. {d['phone']}", 6.5)
    return d, p.done()


TEMPLATES = {
    f.__name__[2:]: f
    for f in (
        t_classic,
        t_billto_big,
        t_marketplace,
        t_credit,
        t_two_page,
        t_swiss_fx,
        t_service_period,
        t_label_grid,
        t_big_lines,
        t_us_fx,
        t_fr_space,
        t_it_es_compact,
    )
}
