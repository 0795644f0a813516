"""ISO 4217 currency codes: the one list a document's currency (BT-5) and a reviewer's are checked against.

No maintained source (pycountry, babel) is a dependency of the jobs, and ISO's List One changes a
few times a decade, so the active alphabetic codes are kept here, from List One (SIX, the ISO 4217
maintenance agency) as amended up to 2025: XCG replaced ANG (31 March 2025), ZWG replaced ZWL
(2024), SLE replaced SLL, VED joined VES; CUC, HRK, MRO, STD, VEF and BYR are withdrawn. A code
that is withdrawn or never existed (`ABC`, `EURO`) names no money a document can be paid in.
XTS (reserved for testing) and XXX (no currency involved) are in List One but name no money, so
they are left out. Fund and precious-metal codes (CHE, CLF, XAU, XDR, …) are kept: EN 16931 takes
its currency code list (BT-5) from ISO 4217 as a whole.

A withdrawn code still names the money of an invoice written before its withdrawal: a backfill
of 2021 invoices in HRK is right, one of 2024 is not. `WITHDRAWN_CODES` (ISO 4217 List Three, the
historic codes, since the euro's cash changeover) holds the day each ceased to be its country's
currency: the changeover to its successor, which List Three records by month (often the end of
a period of dual cash circulation, after invoicing had moved to the new unit). Where the two
differ, the earlier day is kept: an invoice dated between them goes to review, where a person
looks, rather than being accepted in a currency it could no longer be written in. Codes whose
changeover is not settled here (a long dual circulation with no one day) are left out and go to
review. Pure data.
"""

from __future__ import annotations

from datetime import date

# One line per initial letter group would be no easier to check against List One than this grid.
# fmt: off
ISO_4217_CODES: frozenset[str] = frozenset(
    {
        "AED", "AFN", "ALL", "AMD", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BGN", "BHD", "BIF", "BMD",
        "BND", "BOB", "BOV", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHE", "CHF", "CHW", "CLF", "CLP",
        "CNY", "COP", "COU", "CRC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD",
        "FKP", "GBP", "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR",
        "IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT", "LAK",
        "LBP", "LKR", "LRD", "LSL", "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK",
        "MXN", "MXV", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK", "PHP", "PKR",
        "PLN", "PYG", "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SOS",
        "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH",
        "UGX", "USD", "USN", "UYI", "UYU", "UYW", "UZS", "VED", "VES", "VND", "VUV", "WST", "XAF", "XAG", "XAU", "XBA",
        "XBB", "XBC", "XBD", "XCD", "XCG", "XDR", "XOF", "XPD", "XPF", "XPT", "XSU", "XUA", "YER", "ZAR", "ZMW", "ZWG",
    }
)
# fmt: on

_EURO_CASH = date(2002, 1, 1)  # the euro's notes and coins: the legacy units' last day was 31 December 2001

# A withdrawn code -> the first day it no longer named its country's money (its successor's).
WITHDRAWN_CODES: dict[str, date] = {
    **dict.fromkeys(("ATS", "BEF", "DEM", "ESP", "FIM", "FRF", "GRD", "IEP", "ITL", "LUF", "NLG", "PTE"), _EURO_CASH),
    "TRL": date(2005, 1, 1),  # the new Turkish lira (TRY)
    "ROL": date(2005, 7, 1),  # the new leu (RON)
    "SIT": date(2007, 1, 1),  # the euro in Slovenia
    "CYP": date(2008, 1, 1),  # the euro in Cyprus
    "MTL": date(2008, 1, 1),  # the euro in Malta
    "SKK": date(2009, 1, 1),  # the euro in Slovakia
    "EEK": date(2011, 1, 1),  # the euro in Estonia
    "ZMK": date(2013, 1, 1),  # the rebased kwacha (ZMW)
    "LVL": date(2014, 1, 1),  # the euro in Latvia
    "LTL": date(2015, 1, 1),  # the euro in Lithuania
    "BYR": date(2016, 7, 1),  # the redenominated ruble (BYN)
    "MRO": date(2018, 1, 1),  # the redenominated ouguiya (MRU)
    "STD": date(2018, 1, 1),  # the redenominated dobra (STN)
    "VEF": date(2018, 8, 20),  # the bolivar soberano (VES)
    "CUC": date(2021, 1, 1),  # Cuba's monetary unification: the peso (CUP) alone
    "SLL": date(2022, 7, 1),  # the redenominated leone (SLE)
    "HRK": date(2023, 1, 1),  # the euro in Croatia
    "ANG": date(2025, 3, 31),  # the Caribbean guilder (XCG)
}


def is_iso_currency(code: str) -> bool:
    """Whether `code` (upper case, as the model stores it) is an ISO 4217 currency code, active or
    withdrawn (`WITHDRAWN_CODES`): whether it names money at all; `in_use_on` says when.
    """
    return code in ISO_4217_CODES or code in WITHDRAWN_CODES


def in_use_on(code: str, day: date | None) -> bool:
    """Whether an invoice dated `day` can be written in `code`: an active code always, a withdrawn
    one before its withdrawal (an undated invoice in a withdrawn code cannot tell: no).
    """
    if code in ISO_4217_CODES:
        return True
    withdrawn = WITHDRAWN_CODES.get(code)
    return withdrawn is not None and day is not None and day < withdrawn
