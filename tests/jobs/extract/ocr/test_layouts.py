"""The layout development set (tests/data/layouts): header fields from born-digital PDFs and clean scans.

The text-layer form runs whole in the default suite (about 40 one-page PDFs, a few seconds); the
clean scans run on a sample here and whole under `slow` and in bench/bench_ocr.py. Accuracy counts
documents whose five header fields are all right; separately, no document may be PROCESSED with a
wrong header value, and the ambiguity cases must never be PROCESSED at all.
"""

from __future__ import annotations

import io
import sys

import pytest
from ocr_helpers import REPO_ROOT
from PIL import Image

from jobs.contract.status import Status
from jobs.extract import ExtractionSettings, OcrEngine, extract_document
from jobs.extract.ocr import engine
from jobs.extract.ocr.degrade import clean_pages, header_mismatches, make_form
from jobs.extract.ocr.images import render_pdf_page

sys.path.insert(0, str(REPO_ROOT))
from tests.data.layouts.render import Case, accuracy_cases, ambiguity_cases, cases, render

LOCAL = ExtractionSettings(ocr_engine=OcrEngine.LOCAL)
# One of each template and language, read from clean scans in the default run; de-headline-teil's
# total is misread at 150 dpi and settled by the second look at 300 dpi.
SCAN_SAMPLE = ("de-classic-dot", "en-stacked", "fr-headline-avoir", "de-sidebar", "de-headline-teil")


def _read(case: Case, form: str):
    pdf = render(case)
    return extract_document(pdf if form == "text-layer" else make_form(pdf, form), f"{case.id}.pdf", LOCAL)


def test_the_set_is_layout_diverse() -> None:
    every = cases()
    assert len(accuracy_cases()) >= 30
    assert {case.data["template"] for case in every} == {"classic", "stacked", "headline", "sidebar"}
    assert {case.lang for case in every} == {"en", "de", "fr"}
    assert len({case.expected["currency"] for case in every}) >= 5
    assert any(len(case.data["letterhead"]) == 2 for case in every)  # wrapped seller names


@pytest.mark.parametrize("case", accuracy_cases(), ids=lambda c: c.id)
def test_text_layer_reads_every_header_field(case: Case) -> None:
    outcome = _read(case, "text-layer")
    assert header_mismatches(outcome.invoice, case.expected) == {}
    assert outcome.validation.status is Status.PROCESSED, outcome.validation.reasons


@pytest.mark.parametrize("case", ambiguity_cases(), ids=lambda c: c.id)
def test_an_ambiguous_page_goes_to_review(case: Case) -> None:
    outcome = _read(case, "text-layer")
    assert outcome.validation.status.value == case.status, outcome.validation.reasons


@pytest.mark.usefixtures("tesseract")
@pytest.mark.parametrize("case", [c for c in cases() if c.id in SCAN_SAMPLE], ids=lambda c: c.id)
def test_clean_scan_sample(case: Case) -> None:
    outcome = _read(case, "clean")
    assert header_mismatches(outcome.invoice, case.expected) == {}, outcome.validation.reasons
    # Only a reading that would have gone to review pays for the second look, which settles this one.
    assert ("SecondLook" in outcome.raw) is (case.id == "de-headline-teil")
    if case.id == "de-headline-teil":
        assert outcome.validation.status is Status.PROCESSED, outcome.validation.reasons


@pytest.mark.usefixtures("tesseract")
def test_an_image_only_pdf_that_would_go_to_review_is_rendered_again_at_300_dpi(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    case = next(c for c in cases() if c.id == "amb-two-dates")  # ambiguous on the page: no reading may settle it
    scanned = io.BytesIO()
    clean_pages(render(case))[0].save(scanned, format="PDF", resolution=150)
    rendered: list[int] = []

    def recording(pdf: bytes, index: int, dpi: int) -> Image.Image:
        rendered.append(dpi)
        return render_pdf_page(pdf, index, dpi)

    monkeypatch.setattr(engine, "render_pdf_page", recording)
    outcome = extract_document(scanned.getvalue(), f"{case.id}.pdf", LOCAL)
    assert rendered == [200, 300]
    assert outcome.validation.status is Status.REVIEW_REQUIRED and "SecondLook" not in outcome.raw


@pytest.mark.slow
@pytest.mark.usefixtures("tesseract")
def test_clean_scans_hold_their_measured_accuracy_and_none_are_wrongly_processed() -> None:
    right, wrongly_processed = 0, []
    for case in cases():
        outcome = _read(case, "clean")
        wrong = header_mismatches(outcome.invoice, case.expected)
        right += case.status is None and not wrong
        if outcome.validation.status is Status.PROCESSED and (wrong or case.status is not None):
            wrongly_processed.append(f"{case.id}: {wrong}")
    assert wrongly_processed == []
    # Measured 36 of 37 (see docs/ocr.md for the miss); the goal is 95 %.
    assert right / len(accuracy_cases()) >= 0.95
