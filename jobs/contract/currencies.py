"""ISO 4217 currency codes: the one list a document's currency (BT-5) and a reviewer's are checked against.

No maintained source (pycountry, babel) is a dependency of the jobs, and ISO's List One changes a
few times a decade, so the active alphabetic codes are kept here, from List One (SIX, the ISO 4217
maintenance agency) as amended up to 2025: XCG replaced ANG (31 March 2025), ZWG replaced ZWL
(2024), SLE replaced SLL, VED joined VES; CUC, HRK, MRO, STD, VEF and BYR are withdrawn. A code
that is withdrawn or never existed (`ABC`, `EURO`) names no money a document can be paid in.
XTS (reserved for testing) and XXX (no currency involved) are in List One but name no money, so
they are left out. Fund and precious-metal codes (CHE, CLF, XAU, XDR, …) are kept: EN 16931 takes
its currency code list (BT-5) from ISO 4217 as a whole. Pure data.
"""

from __future__ import annotations

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


def is_iso_currency(code: str) -> bool:
    """Whether `code` (upper case, as the model stores it) is an active ISO 4217 currency code."""
    return code in ISO_4217_CODES
