"""Vocabulary and number, money and date printing for the probe set (tests/data/probes)."""

from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP, Decimal

Q = Decimal("0.01")


def q(x) -> Decimal:
    return Decimal(x).quantize(Q, rounding=ROUND_HALF_UP)


# ------------------------------------------------------------------ vocabulary
LABELS = {
    "title": {"en": "INVOICE", "de": "RECHNUNG", "fr": "FACTURE", "nl": "FACTUUR", "it": "FATTURA", "es": "FACTURA"},
    "credit": {
        "en": "CREDIT NOTE",
        "de": "GUTSCHRIFT",
        "fr": "AVOIR",
        "nl": "CREDITNOTA",
        "it": "NOTA DI CREDITO",
        "es": "FACTURA RECTIFICATIVA",
    },
    "inv_no": {
        "en": ["Invoice No.", "Invoice number", "Invoice #"],
        "de": ["Rechnungsnummer", "Rechnungs-Nr.", "Rechnung Nr."],
        "fr": ["Facture n°", "N° de facture", "Numéro de facture"],
        "nl": ["Factuurnummer", "Factuur nr."],
        "it": ["Fattura n.", "Numero fattura"],
        "es": ["Factura nº", "Número de factura"],
    },
    "cn_no": {
        "en": ["Credit note no."],
        "de": ["Gutschrift Nr.", "Gutschriftsnummer"],
        "fr": ["Avoir n°"],
        "nl": ["Creditnota nr."],
        "it": ["Nota di credito n."],
        "es": ["Factura rectificativa nº"],
    },
    "inv_date": {
        "en": ["Invoice date", "Date", "Date of issue"],
        "de": ["Rechnungsdatum", "Datum"],
        "fr": ["Date de facture", "Date"],
        "nl": ["Factuurdatum", "Datum"],
        "it": ["Data fattura", "Data"],
        "es": ["Fecha de factura", "Fecha"],
    },
    "order_no": {
        "en": ["Order no.", "Purchase order"],
        "de": ["Bestellnummer", "Auftragsnr."],
        "fr": ["N° de commande"],
        "nl": ["Ordernummer"],
        "it": ["N. ordine"],
        "es": ["Nº de pedido"],
    },
    "cust_no": {
        "en": ["Customer no.", "Account no."],
        "de": ["Kundennummer", "Kunden-Nr."],
        "fr": ["N° client"],
        "nl": ["Klantnummer"],
        "it": ["Codice cliente"],
        "es": ["Nº de cliente"],
    },
    "dn_no": {
        "en": ["Delivery note no."],
        "de": ["Lieferschein-Nr."],
        "fr": ["Bon de livraison n°"],
        "nl": ["Pakbonnummer"],
        "it": ["DDT n."],
        "es": ["Albarán nº"],
    },
    "contract": {
        "en": ["Contract no."],
        "de": ["Vertragsnummer"],
        "fr": ["N° de contrat"],
        "nl": ["Contractnummer"],
        "it": ["Contratto n."],
        "es": ["Contrato nº"],
    },
    "ref": {
        "en": ["Your reference"],
        "de": ["Ihr Zeichen"],
        "fr": ["Votre référence"],
        "nl": ["Uw referentie"],
        "it": ["Vs. riferimento"],
        "es": ["Su referencia"],
    },
    "order_date": {
        "en": "Order date",
        "de": "Bestelldatum",
        "fr": "Date de commande",
        "nl": "Besteldatum",
        "it": "Data ordine",
        "es": "Fecha de pedido",
    },
    "deliv_date": {
        "en": "Delivery date",
        "de": "Lieferdatum",
        "fr": "Date de livraison",
        "nl": "Leverdatum",
        "it": "Data consegna",
        "es": "Fecha de entrega",
    },
    "due_date": {
        "en": "Due date",
        "de": "Fällig am",
        "fr": "Date d'échéance",
        "nl": "Vervaldatum",
        "it": "Scadenza",
        "es": "Vencimiento",
    },
    "period": {
        "en": "Service period",
        "de": "Leistungszeitraum",
        "fr": "Période de prestation",
        "nl": "Periode",
        "it": "Periodo di competenza",
        "es": "Periodo de servicio",
    },
    "printed": {
        "en": "Printed on",
        "de": "Druckdatum",
        "fr": "Imprimé le",
        "nl": "Afgedrukt op",
        "it": "Stampato il",
        "es": "Impreso el",
    },
    "subtotal": {
        "en": ["Subtotal", "Net amount"],
        "de": ["Zwischensumme", "Nettobetrag"],
        "fr": ["Total HT"],
        "nl": ["Subtotaal"],
        "it": ["Imponibile"],
        "es": ["Base imponible"],
    },
    "discount": {"en": "Discount", "de": "Rabatt", "fr": "Remise", "nl": "Korting", "it": "Sconto", "es": "Descuento"},
    "shipping": {
        "en": "Shipping",
        "de": "Versandkosten",
        "fr": "Frais de port",
        "nl": "Verzendkosten",
        "it": "Spese di spedizione",
        "es": "Gastos de envío",
    },
    "tax": {
        "en": "VAT {r}%",
        "de": "MwSt. {r} %",
        "fr": "TVA {r} %",
        "nl": "BTW {r}%",
        "it": "IVA {r}%",
        "es": "IVA {r}%",
    },
    "total": {
        "en": ["Total", "Invoice total", "Total amount"],
        "de": ["Gesamtbetrag", "Rechnungsbetrag", "Summe brutto"],
        "fr": ["Total TTC", "Montant TTC"],
        "nl": ["Totaal incl. BTW", "Totaalbedrag"],
        "it": ["Totale documento", "Totale fattura"],
        "es": ["Importe total", "Total factura"],
    },
    "paid": {
        "en": ["Amount paid", "Prepayment"],
        "de": ["Anzahlung", "Bereits bezahlt"],
        "fr": ["Acompte versé", "Déjà payé"],
        "nl": ["Reeds betaald", "Aanbetaling"],
        "it": ["Acconto"],
        "es": ["Anticipo"],
    },
    "due_amt": {
        "en": ["Amount due", "Balance due"],
        "de": ["Zahlbetrag", "Noch zu zahlen"],
        "fr": ["Net à payer", "Reste à payer"],
        "nl": ["Te betalen"],
        "it": ["Netto a pagare"],
        "es": ["Total a pagar"],
    },
    "vat_id": {
        "en": "VAT No.",
        "de": "USt-IdNr.",
        "fr": "N° TVA intracom.",
        "nl": "BTW-nummer",
        "it": "P. IVA",
        "es": "NIF",
    },
    "bill_to": {
        "en": "Bill to",
        "de": "Rechnungsempfänger",
        "fr": "Facturé à",
        "nl": "Factuuradres",
        "it": "Intestatario",
        "es": "Facturar a",
    },
    "ship_to": {
        "en": "Ship to",
        "de": "Lieferadresse",
        "fr": "Livré à",
        "nl": "Afleveradres",
        "it": "Destinazione",
        "es": "Enviar a",
    },
    "cols": {
        "en": ("Pos.", "Description", "Qty", "Unit price", "Amount"),
        "de": ("Pos.", "Bezeichnung", "Menge", "Einzelpreis", "Gesamt"),
        "fr": ("N°", "Désignation", "Qté", "Prix unitaire", "Montant"),
        "nl": ("Nr.", "Omschrijving", "Aantal", "Prijs", "Bedrag"),
        "it": ("N.", "Descrizione", "Q.tà", "Prezzo", "Importo"),
        "es": ("Nº", "Descripción", "Cant.", "Precio", "Importe"),
    },
    "page": {
        "en": "Page {a} of {b}",
        "de": "Seite {a} von {b}",
        "fr": "Page {a} / {b}",
        "nl": "Pagina {a} van {b}",
        "it": "Pagina {a} di {b}",
        "es": "Página {a} de {b}",
    },
    "carry": {
        "en": "Carried forward",
        "de": "Übertrag",
        "fr": "Report",
        "nl": "Transport",
        "it": "Riporto",
        "es": "Suma y sigue",
    },
    "thanks": {
        "en": "Thank you for your business.",
        "de": "Vielen Dank für Ihren Auftrag.",
        "fr": "Merci de votre confiance.",
        "nl": "Dank voor uw bestelling.",
        "it": "Grazie per la fiducia.",
        "es": "Gracias por su confianza.",
    },
    "pay_terms": {
        "en": "Payable within 14 days without deduction.",
        "de": "Zahlbar innerhalb von 14 Tagen ohne Abzug.",
        "fr": "Paiement à 30 jours.",
        "nl": "Betaling binnen 14 dagen.",
        "it": "Pagamento a 30 giorni d.f.",
        "es": "Pago a 30 días.",
    },
}
ITEMS = {
    "en": [
        "Consulting hours",
        "Laser toner cartridge",
        "Office chair ergonomic",
        "Installation service",
        "Software licence (annual)",
        "Network cable Cat6 5 m",
        "Maintenance flat fee",
        "Printer paper A4 (box)",
        "Training workshop",
        "Hosting package M",
    ],
    "de": [
        "Beratungsstunden",
        "Tonerkartusche schwarz",
        "Bürostuhl ergonomisch",
        "Montage vor Ort",
        "Softwarelizenz (jährlich)",
        "Netzwerkkabel Cat6 5 m",
        "Wartungspauschale",
        "Kopierpapier A4 (Karton)",
        "Schulung Halbtag",
        "Hosting-Paket M",
    ],
    "fr": [
        "Heures de conseil",
        "Cartouche de toner",
        "Fauteuil de bureau",
        "Installation sur site",
        "Licence logiciel (annuelle)",
        "Câble réseau Cat6 5 m",
        "Forfait maintenance",
        "Papier A4 (carton)",
        "Formation demi-journée",
        "Hébergement offre M",
    ],
    "nl": [
        "Adviesuren",
        "Tonercartridge zwart",
        "Bureaustoel",
        "Installatie op locatie",
        "Softwarelicentie (jaar)",
        "Netwerkkabel Cat6 5 m",
        "Onderhoudsabonnement",
        "Printpapier A4 (doos)",
        "Training halve dag",
        "Hostingpakket M",
    ],
    "it": [
        "Ore di consulenza",
        "Cartuccia toner",
        "Sedia da ufficio",
        "Installazione in sede",
        "Licenza software (annuale)",
        "Cavo di rete Cat6 5 m",
        "Canone manutenzione",
        "Carta A4 (scatola)",
        "Corso di formazione",
        "Pacchetto hosting M",
    ],
    "es": [
        "Horas de consultoría",
        "Cartucho de tóner",
        "Silla de oficina",
        "Instalación in situ",
        "Licencia software (anual)",
        "Cable de red Cat6 5 m",
        "Cuota de mantenimiento",
        "Papel A4 (caja)",
        "Taller de formación",
        "Paquete hosting M",
    ],
}
MONTHS = {
    "en": [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ],
    "de": [
        "Januar",
        "Februar",
        "März",
        "April",
        "Mai",
        "Juni",
        "Juli",
        "August",
        "September",
        "Oktober",
        "November",
        "Dezember",
    ],
    "fr": [
        "janvier",
        "février",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "août",
        "septembre",
        "octobre",
        "novembre",
        "décembre",
    ],
}
FORMS = {
    "en": ["Ltd", "Limited", "LLP", "plc"],
    "de": ["GmbH", "GmbH & Co. KG", "AG", "e.K.", "UG (haftungsbeschränkt)"],
    "fr": ["SARL", "SAS", "SA"],
    "nl": ["B.V.", "N.V."],
    "it": ["S.r.l.", "S.p.A."],
    "es": ["S.L.", "S.A."],
    "us": ["Inc.", "LLC", "Corp."],
    "ch": ["AG", "GmbH", "SA"],
}
W1 = [
    "Nordlicht",
    "Bergmann",
    "Kestrel",
    "Harbourside",
    "Lumen",
    "Tessera",
    "Vireo",
    "Orchard",
    "Falkner",
    "Brightwater",
    "Mistral",
    "Corvo",
    "Solara",
    "Quercus",
    "Halvard",
    "Ostwind",
    "Aurelio",
    "Delamere",
    "Riverbend",
    "Lindqvist",
    "Sankt Anna",
    "Vega",
]
W2 = [
    "Systems",
    "Logistik",
    "Technik",
    "Druck",
    "Consulting",
    "Foods",
    "Elektro",
    "Services",
    "Medien",
    "Trading",
    "Werkzeuge",
    "Papier",
    "Software",
    "Bürobedarf",
    "Solutions",
    "Industries",
    "Components",
    "Energie",
]
CITIES = {
    "en": [("12 Harbour Road", "Bristol BS1 4QA"), ("7 Mill Lane", "Leeds LS2 7EY")],
    "de": [("Hafenstraße 14", "20457 Hamburg"), ("Lindenallee 3", "80331 München"), ("Am Markt 9", "04109 Leipzig")],
    "fr": [("12 rue des Lilas", "69003 Lyon"), ("4 avenue Foch", "75016 Paris")],
    "nl": [("Keizersgracht 120", "1015 CW Amsterdam")],
    "it": [("Via Roma 21", "20121 Milano"), ("Corso Vittorio 8", "10121 Torino")],
    "es": [("Calle Mayor 15", "28013 Madrid")],
    "us": [("410 Market Street, Suite 200", "San Francisco, CA 94105")],
    "ch": [("Bahnhofstrasse 12", "8001 Zürich")],
}
RATES = {
    "en": (20, 5),
    "de": (19, 7),
    "fr": (Decimal("20"), Decimal("5.5")),
    "nl": (21, 9),
    "it": (22, 10),
    "es": (21, 10),
    "ch": (Decimal("8.1"), Decimal("2.6")),
    "us": (Decimal("8.625"), None),
}
CUR = {"en": "GBP", "de": "EUR", "fr": "EUR", "nl": "EUR", "it": "EUR", "es": "EUR", "ch": "CHF", "us": "USD"}
NUMSTYLE = {"en": "en", "de": "de", "fr": "fr", "nl": "de", "it": "de", "es": "de", "ch": "ch", "us": "en"}


def fmt_num(x: Decimal, style: str) -> str:
    neg = x < 0
    s = f"{abs(x):,.2f}"  # 1,234.56
    if style == "de":
        s = s.replace(",", "X").replace(".", ",").replace("X", ".")
    elif style == "fr":
        s = s.replace(",", " ").replace(".", ",")
    elif style == "ch":
        s = s.replace(",", "'")
    return ("-" if neg else "") + s


SYM = {"EUR": "€", "GBP": "£", "USD": "$", "CHF": "CHF"}


def money(x: Decimal, d: dict, mark=None) -> str:
    mark = d["mark"] if mark is None else mark
    n = fmt_num(x, d["numstyle"])
    cur = d["currency"]
    if mark == "none":
        return n
    if mark == "sym_before":
        return f"{SYM[cur]}{n}" if cur in ("GBP", "USD") else f"{SYM[cur]} {n}"
    if mark == "sym_after":
        return f"{n} {SYM[cur]}"
    if mark == "code_before":
        return f"{cur} {n}"
    return f"{n} {cur}"


def fmt_date(d: date, lang: str, form: str) -> str:
    if form == "dot":
        return d.strftime("%d.%m.%Y")
    if form == "slash":
        return d.strftime("%d/%m/%Y")
    if form == "dash":
        return d.strftime("%d-%m-%Y")
    if form == "iso":
        return d.isoformat()
    if form == "us":
        return f"{MONTHS['en'][d.month - 1]} {d.day}, {d.year}"
    if form == "long":
        ml = MONTHS.get(lang, MONTHS["en"])
        if lang == "de":
            return f"{d.day}. {ml[d.month - 1]} {d.year}"
        return f"{d.day} {ml[d.month - 1]} {d.year}"
    raise ValueError(form)


ABBR = {"en": ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]}
