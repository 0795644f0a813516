"""Currency codes are ISO 4217 codes, and a name is made of visible characters, in every reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from extract_helpers import EINVOICE, complete_fields, summary_field, textract_bytes, textract_doc

from jobs.contract.currencies import ISO_4217_CODES, is_iso_currency
from jobs.extract import extract_document
from jobs.extract.text import clean


def _mutated(folder: str, name: str, old: str, new: str) -> bytes:
    data = (EINVOICE / folder / name).read_bytes()
    assert old.encode() in data
    return data.replace(old.encode(), new.encode())


def test_the_code_list_holds_active_codes_only() -> None:
    assert {"EUR", "USD", "JPY", "CHF", "XCG", "ZWG", "SLE", "VED"} <= ISO_4217_CODES
    # Withdrawn (HRK, ANG, ZWL, CUC), never assigned (ABC) or naming no money (XXX, XTS).
    assert not {"HRK", "ANG", "ZWL", "CUC", "ABC", "XXX", "XTS"} & ISO_4217_CODES
    assert all(len(code) == 3 and code.isascii() and code.isupper() for code in ISO_4217_CODES)
    assert not is_iso_currency("eur")  # the model stores upper case; readers upper-case first


@pytest.mark.parametrize(
    ("folder", "old", "new"),
    [
        ("cii", "<ram:InvoiceCurrencyCode>EUR<", "<ram:InvoiceCurrencyCode>ABC<"),
        ("ubl", "<cbc:DocumentCurrencyCode>EUR<", "<cbc:DocumentCurrencyCode>ABC<"),
    ],
)
def test_an_xml_currency_that_is_no_iso_code_is_invalid(corpus: Path, folder: str, old: str, new: str) -> None:
    outcome = extract_document(_mutated(folder, f"EN16931_Einfach.{folder}.xml", old, new), "x.xml")
    assert outcome.invoice is not None and outcome.invoice.currency is None
    assert {"INVALID_VALUE:currency", "MISSING_FIELD:currency"} <= set(outcome.validation.reasons)


def test_a_textract_currency_code_that_is_no_iso_code_is_invalid() -> None:
    fields = [*complete_fields(SUBTOTAL="1000.00", TAX="190.00", TOTAL=""), summary_field("TOTAL", "1190.00")]
    fields[-1]["Currency"] = {"Code": "ABC"}
    outcome = extract_document(textract_bytes(textract_doc(fields)), "r.json")
    assert outcome.invoice is not None and outcome.invoice.currency is None
    assert outcome.validation.reasons == ["INVALID_VALUE:currency", "MISSING_FIELD:currency"]


def test_a_normalized_json_currency_that_is_no_iso_code_is_invalid() -> None:
    data = b'{"invoiceNumber": "1", "invoiceDate": "2026-03-15", "vendorName": "V", "currency": "ABC"}'
    outcome = extract_document(data, "x.json")
    assert outcome.invoice is not None and outcome.invoice.currency is None
    assert outcome.validation.reasons == [
        "INVALID_VALUE:currency",
        "MISSING_FIELD:currency",
        "MISSING_FIELD:totalAmount",
    ]


# ---------------------------------------------------------------------------- invisible names


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("\u200b", None),  # zero-width space (Cf)
        ("\ufeff\u2060\u200d", None),  # BOM, word joiner, zero-width joiner (Cf)
        ("\x00\x07", None),  # control characters (Cc) that are no whitespace
        ("\u3000\u00a0 \u2003", None),  # space separators only (Zs)
        ("\u3164", None),  # Hangul filler: a letter that prints as nothing
        ("\u200bAcme\u00a0GmbH\u200e", "Acme GmbH"),  # stripped at the edges, collapsed inside
        ("\u200b \u200b Acme \u2060", "Acme"),
        ("Ni\u200dco", "Ni\u200dco"),  # inside a name a joiner may matter (scripts, emoji): kept
        ("Acme", "Acme"),
    ],
)
def test_names_lose_invisible_characters_at_the_edges(raw: str, kept: str | None) -> None:
    assert clean(raw) == kept


def test_an_xml_vendor_name_of_a_zero_width_space_is_missing(corpus: Path) -> None:
    data = _mutated("cii", "EN16931_Einfach.cii.xml", "<ram:Name>Lieferant GmbH<", "<ram:Name>\u200b<")
    assert "MISSING_FIELD:vendorName" in extract_document(data, "x.xml").validation.reasons


def test_a_textract_vendor_name_loses_invisible_edges() -> None:
    blank = extract_document(textract_bytes(textract_doc(complete_fields(VENDOR_NAME="\u200b"))), "r.json")
    assert "MISSING_FIELD:vendorName" in blank.validation.reasons
    edged = extract_document(textract_bytes(textract_doc(complete_fields(VENDOR_NAME="\ufeffACME GmbH\u200b"))), "r")
    assert edged.invoice is not None and edged.invoice.vendorName == "ACME GmbH"


def test_a_normalized_json_vendor_name_of_invisible_characters_is_missing() -> None:
    data = json.dumps(
        {"invoiceNumber": "\u200b1", "invoiceDate": "2026-03-15", "vendorName": "\u200b", "currency": "EUR"}
    ).encode()
    outcome = extract_document(data, "x.json")
    assert outcome.invoice is not None and outcome.invoice.vendorName is None and outcome.invoice.invoiceNumber == "1"
    assert "MISSING_FIELD:vendorName" in outcome.validation.reasons
