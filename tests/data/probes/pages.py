"""The invented document data (`make_doc`, its truth) and the drawing helpers the probe templates share."""

from __future__ import annotations

import io
import random
import re
from datetime import date, timedelta
from decimal import Decimal

from reportlab.lib.pagesizes import A4
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

from tests.data.probes.vocab import (
    CITIES,
    CUR,
    FORMS,
    ITEMS,
    LABELS,
    NUMSTYLE,
    RATES,
    SYM,
    W1,
    W2,
    fmt_num,
    money,
    q,
)


# ------------------------------------------------------------------ document data
def make_doc(rng: random.Random, lang: str, region: str | None = None, **kw) -> dict:
    region = region or lang
    d: dict = {"lang": lang, "region": region}
    form = rng.choice(FORMS[region])
    d["vendor"] = f"{rng.choice(W1)} {rng.choice(W2)} {form}"
    while True:
        bform = rng.choice(FORMS[region])
        d["buyer"] = f"{rng.choice(W1)} {rng.choice(W2)} {bform}"
        if d["buyer"].split()[0] != d["vendor"].split()[0]:
            break
    d["v_addr"] = rng.choice(CITIES[region])
    d["b_addr"] = rng.choice(CITIES[region])
    d["buyer_contact"] = rng.choice(
        ["z. Hd. Frau Weber", "Attn: Accounts Payable", "c/o Purchasing", "Mr. J. Patel", "Mme Durand"]
    )
    year = 2026
    d["date"] = date(year, rng.randint(1, 12), rng.randint(1, 28))
    d["order_date"] = d["date"] - timedelta(days=rng.randint(3, 30))
    d["deliv_date"] = d["date"] - timedelta(days=rng.randint(1, 5))
    d["due"] = d["date"] + timedelta(days=rng.choice([14, 30]))
    d["printed"] = d["date"] + timedelta(days=rng.randint(1, 40))
    p0 = d["date"].replace(day=1) - timedelta(days=1)
    d["period"] = (p0.replace(day=1), p0)
    pat = rng.choice(
        [
            "RE-{y}-{n:05d}",
            "{y}{n:06d}",
            "INV-{n:06d}",
            "F{y}/{n:04d}",
            "{n:07d}",
            "R{n:06d}",
            "{y}-{n:04d}",
            "AR/{y}/{n:05d}",
        ]
    )
    d["number"] = pat.format(y=year, n=rng.randint(10, 99999))
    d["order_no"] = rng.choice(["PO-", "B", "ORD-", "4500"]) + str(rng.randint(100000, 999999))
    d["cust_no"] = rng.choice(["K", "C-", "", "KD"]) + str(rng.randint(10000, 99999))
    d["dn_no"] = rng.choice(["LS-", "DN", "L"]) + str(rng.randint(100000, 999999))
    d["contract"] = "V-" + str(rng.randint(1000, 9999)) + "-" + str(rng.randint(10, 99))
    d["ref"] = rng.choice(["Mail vom ", "PO ", "Ref. ", ""]) + str(rng.randint(1000, 9999))
    cc = {"en": "GB", "de": "DE", "fr": "FR", "nl": "NL", "it": "IT", "es": "ES", "us": "US", "ch": "CHE"}[region]
    d["vat_id"] = f"{cc}{rng.randint(100000000, 999999999)}"
    d["buyer_vat"] = f"{cc}{rng.randint(100000000, 999999999)}"
    d["iban"] = (
        f"DE{rng.randint(10, 99)} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)} "
        f"{rng.randint(1000, 9999)} {rng.randint(1000, 9999)} {rng.randint(10, 99)}"
    )
    d["phone"] = f"+49 {rng.randint(30, 899)} {rng.randint(100000, 9999999)}"
    d["bank"] = rng.choice(
        [
            "Deutsche Bank AG",
            "Commerzbank AG",
            "Sparkasse KölnBonn",
            "BNP Paribas SA",
            "ING Bank N.V.",
            "Barclays Bank PLC",
            "UniCredit S.p.A.",
            "Banco Santander S.A.",
        ]
    )
    d["currency"] = kw.get("currency", CUR[region])
    d["numstyle"] = kw.get("numstyle", NUMSTYLE[region])
    d["mark"] = kw.get("mark", rng.choice(["sym_before", "sym_after", "code_before", "code_after", "none"]))
    d["datefmt"] = kw.get(
        "datefmt",
        rng.choice(
            {"en": ["long", "slash", "iso"], "de": ["dot", "long"], "fr": ["slash", "long"], "us": ["us"]}.get(
                region, ["dot", "slash", "dash"]
            )
        ),
    )
    rates = RATES[region]
    nitems = kw.get("nitems", rng.randint(2, 6))
    items = []
    names = ITEMS.get(lang, ITEMS["en"])
    for _ in range(nitems):
        qty = rng.choice([1, 1, 2, 3, 5, 10, 12, 40])
        price = q(Decimal(rng.randint(150, 250000)) / 100)
        if kw.get("big"):
            price = q(price * 3 + 800)
        rate = rates[0] if (rates[1] is None or rng.random() < 0.65) else rates[1]
        items.append({"name": rng.choice(names), "qty": qty, "price": price, "amount": q(qty * price), "rate": rate})
    d["items"] = items
    net_lines = sum(i["amount"] for i in items)
    d["discount_pct"] = kw.get("discount_pct", rng.choice([0, 0, 0, 3, 5, 10]))
    d["shipping"] = (
        q(rng.choice([0, 0, Decimal("4.90"), Decimal("9.95"), Decimal("24.50")])) if kw.get("shipping", True) else q(0)
    )
    factor = (Decimal(100) - d["discount_pct"]) / 100
    by_rate: dict = {}
    for i in items:
        by_rate[i["rate"]] = by_rate.get(i["rate"], Decimal(0)) + i["amount"] * factor
    if d["shipping"]:
        by_rate[rates[0]] = by_rate.get(rates[0], Decimal(0)) + d["shipping"]
    d["net_lines"] = q(net_lines)
    d["discount"] = q(net_lines * d["discount_pct"] / 100)
    d["net"] = q(net_lines - d["discount"] + d["shipping"])
    d["taxes"] = [(r, q(b), q(b * Decimal(r) / 100)) for r, b in sorted(by_rate.items(), reverse=True)]
    d["tax"] = sum(t for _, _, t in d["taxes"])
    d["total"] = d["net"] + d["tax"]
    d["paid"] = q(d["total"] * Decimal(rng.choice([0, 0, 20, 30, 50])) / 100) if kw.get("paid", True) else q(0)
    d["amount_due"] = d["total"] - d["paid"]
    d["sign"] = 1
    return d


def pick(rng, key, lang):
    v = LABELS[key][lang]
    return rng.choice(v) if isinstance(v, list) else v


def truth(d: dict) -> dict:
    return {
        "invoiceNumber": d["number"],
        "invoiceDate": d["date"].isoformat(),
        "vendorName": d["vendor"],
        "currency": d["currency"],
        "totalAmount": str(d["total"] * d["sign"]),
    }


# ------------------------------------------------------------------ drawing helpers
class Page:
    def __init__(self, size=A4):
        self.buf = io.BytesIO()
        self.c = Canvas(self.buf, pagesize=size, invariant=1)
        self.W, self.H = size
        self.font = "Helvetica"
        self.bold = "Helvetica-Bold"

    def t(self, x, y, s, size=9, bold=False, align="l", font=None):
        f = font or (self.bold if bold else self.font)
        self.c.setFont(f, size)
        if align == "r":
            self.c.drawRightString(x, y, s)
        elif align == "c":
            self.c.drawCentredString(x, y, s)
        else:
            self.c.drawString(x, y, s)

    def w(self, s, size=9, bold=False):
        return stringWidth(s, self.bold if bold else self.font, size)

    def line(self, x1, y1, x2, y2, width=0.5):
        self.c.setLineWidth(width)
        self.c.line(x1, y1, x2, y2)

    def rect(self, x, y, w, h):
        self.c.setLineWidth(0.5)
        self.c.rect(x, y, w, h)

    def page(self):
        self.c.showPage()

    def done(self) -> bytes:
        self.c.save()
        return self.buf.getvalue()


def kv_rows(p, x_label, x_val, y, rows, size=9, label_align="l", val_align="l", gap=None, bold_last=False):
    gap = gap or size * 1.45
    for i, (k, v) in enumerate(rows):
        b = bold_last and i == len(rows) - 1
        p.t(x_label, y, k, size, b, label_align)
        p.t(x_val, y, v, size, b, val_align)
        y -= gap
    return y


def item_table(p, d, x0, x1, y, size=8.5, boxed=False, show_rate=False, rows=None, start_pos=1):
    lang = d["lang"]
    cols = LABELS["cols"][lang]
    xs = [x0, x0 + 28, x1 - 190, x1 - 95, x1]
    p.t(xs[0], y, cols[0], size, True)
    p.t(xs[1], y, cols[1], size, True)
    p.t(xs[2], y, cols[2], size, True, "r")
    p.t(xs[3], y, cols[3], size, True, "r")
    p.t(xs[4], y, cols[4], size, True, "r")
    if show_rate:
        p.t(xs[2] - 45, y, "%", size, True, "r")
    p.line(x0, y - 4, x1, y - 4)
    y -= size * 1.9
    for n, it in enumerate(rows if rows is not None else d["items"], start_pos):
        p.t(xs[0], y, str(n), size)
        p.t(xs[1], y, it["name"], size)
        p.t(xs[2], y, str(it["qty"] * d["sign"]), size, align="r")
        p.t(xs[3], y, fmt_num(it["price"], d["numstyle"]), size, align="r")
        if show_rate:
            p.t(
                xs[2] - 45,
                y,
                f"{fmt_num(Decimal(it['rate']), d['numstyle']).replace(',00', '').replace('.00', '')} %",
                size,
                align="r",
            )
        p.t(xs[4], y, fmt_num(it["amount"] * d["sign"], d["numstyle"]), size, align="r")
        y -= size * 1.6
    p.line(x0, y + size * 0.6, x1, y + size * 0.6)
    return y - size


def rate_s(r, d):
    s = fmt_num(Decimal(r), d["numstyle"])
    return re.sub(r"[.,]00$", "", s).rstrip("0") if re.search(r"[.,]\d*[1-9]0$", s) else re.sub(r"[.,]00$", "", s)


def totals_rows(rng, d, full=True, mark=None):
    lang = d["lang"]
    s = d["sign"]

    def m(x):
        return money(x * s, d, mark)

    rows = []
    if d["discount"] or d["shipping"] or rng.random() < 0.5:
        rows.append((pick(rng, "subtotal", lang), m(d["net_lines"])))
    if d["discount"]:
        rows.append((f"{LABELS['discount'][lang]} {d['discount_pct']} %", m(-d["discount"])))
    if d["shipping"]:
        rows.append((LABELS["shipping"][lang], m(d["shipping"])))
    if d["discount"] or d["shipping"]:
        rows.append((pick(rng, "subtotal", lang) if lang != "en" else "Net total", m(d["net"])))
    for r, _base, t in d["taxes"]:
        rows.append((LABELS["tax"][lang].format(r=rate_s(r, d)), m(t)))
    rows.append((pick(rng, "total", lang), m(d["total"])))
    if full and d["paid"]:
        rows.append((pick(rng, "paid", lang), m(-d["paid"])))
        rows.append((pick(rng, "due_amt", lang), m(d["amount_due"])))
    return rows


def footer(p, d, y=60, size=7, cols=3):
    lang = d["lang"]
    a = d["v_addr"]
    x = 50
    blocks = [
        [d["vendor"], a[0], a[1], f"Tel. {d['phone']}"],
        [d["bank"], f"IBAN {d['iban']}", "BIC DEUTDEFFXXX" if "Deutsche" in d["bank"] else "BIC COBADEFFXXX"],
        [
            f"{LABELS['vat_id'][lang]} {d['vat_id']}",
            "Amtsgericht Hamburg HRB 123456" if lang == "de" else "Reg. 0412 3456",
            "Geschäftsführer: A. Brandt" if lang == "de" else "Director: A. Brandt",
        ],
    ]
    p.line(50, y + 12, p.W - 50, y + 12, 0.3)
    step = (p.W - 100) / cols
    for i, b in enumerate(blocks[:cols]):
        yy = y
        for s in b:
            p.t(x + i * step, yy, s, size)
            yy -= size * 1.3


def addr_block(p, x, y, lines, size=9.5, gap=12, align="l", bold_first=False):
    for j, s in enumerate(lines):
        p.t(x, y, s, size, bold_first and j == 0, align)
        y -= gap
    return y


def parse_back(v: str, d: dict) -> Decimal:
    s = v.replace(d["currency"], "").replace(SYM.get(d["currency"], "#"), "").strip()
    st = d["numstyle"]
    if st == "de":
        s = s.replace(".", "").replace(",", ".")
    elif st == "fr":
        s = s.replace(" ", "").replace(",", ".")
    else:
        s = s.replace(",", "").replace("'", "")
    return Decimal(s)


def buyer_info_items(p, d, rows):
    """The buyer at the left, the info `rows` at the right, the title and the positions: the y under the table."""
    addr_block(p, 50, p.H - 130, [d["buyer"], *d["b_addr"]], 10, 13)
    kv_rows(p, p.W - 240, p.W - 130, p.H - 130, rows, 9)
    p.t(50, p.H - 220, LABELS["title"][d["lang"]], 14, True)
    return item_table(p, d, 50, p.W - 50, p.H - 245)
