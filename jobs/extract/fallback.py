"""The second opinion in AWS: when a text-layer PDF's local reading should also go to Amazon
Textract AnalyzeExpense, and what result.json says about the two readings.

Pure decisions, no I/O: the ingest asks `wants_textract_fallback` after extract_document and, when
it says yes, sends the object to Textract (jobs.store.textract, within the night's page cap) and
keeps Textract's reading only when it is clean (PROCESSED) and agrees with every header field the
text layer read without doubt, as the scans' second look keeps its second reading; otherwise the
local reading stands and goes to review (two readers that disagree are a person's call). `second_opinion` records
which reading won and why in the kept outcome's raw output (`SecondOpinion`, beside the raw
extraction in result.json). It costs money per page: the stack turns it on with
`ocrEngine: textract` (docuflow:textractFallback, JobSettings.extraction.textract_fallback) and can turn it off.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from jobs.contract.invoice import DocumentFormat, ExtractionOutcome
from jobs.contract.status import Status
from jobs.extract.ocr.engine import TEXT_LAYER

SECOND_OPINION = "SecondOpinion"  # the key of the record in the kept outcome's raw output
# Reasons no second reader can settle: the document says so itself (a total below zero, several
# invoices in one file), so Textract would be paid to find the same.
_UNSETTLED_BY_READING = ("NEGATIVE_TOTAL", "MULTIPLE_DOCUMENTS")
# The header fields a second reading must not contradict where the text layer read them without
# doubt: a clean Textract reading of another total or number is a second value, not a settlement.
_HEADER_FIELDS = ("invoiceNumber", "invoiceDate", "vendorName", "currency", "totalAmount")
DISAGREEMENT = "CONFLICTING_VALUES"  # the reason added, per field, when the two readings disagree


def wants_textract_fallback(outcome: ExtractionOutcome, *, enabled: bool) -> bool:
    """True when `enabled` and `outcome` is a plain PDF read from its text layer that would go to
    review for a reason another reader could settle: a header field missing or read with low
    confidence, a conflict between values on the page, a value out of range, an ambiguous date,
    totals that do not add up. Never for e-invoices, images, failures (a scan needing OCR already
    goes to Textract as NEEDS_OCR), PROCESSED documents, or a review whose reasons the page itself
    gives (a negative total, several documents in one file).
    """
    reasons = outcome.validation.reasons
    return (
        enabled
        and outcome.format is DocumentFormat.PDF
        and outcome.engine.split("+")[0] == TEXT_LAYER
        and outcome.validation.status is Status.REVIEW_REQUIRED
        and bool(reasons)
        and not any(reason.startswith(_UNSETTLED_BY_READING) for reason in reasons)
    )


def second_opinion(
    local: ExtractionOutcome, textract: ExtractionOutcome | None, *, not_asked: str | None = None
) -> ExtractionOutcome:
    """The outcome to keep of a text-layer reading and Textract's (None: Textract was not asked,
    `not_asked` says why: the night's page cap), with the record of the choice in its raw output.
    Textract's reading wins only when it is clean and contradicts no header field the text layer
    read without doubt; a second opinion can settle a document, never unsettle one, and two
    readings that disagree are a person's call (CONFLICTING_VALUES:<field>).
    """
    clean = textract is not None and textract.validation.status is Status.PROCESSED
    disagree = _disagreements(local, textract) if clean and textract is not None else []
    won = clean and not disagree
    reason = _reason(textract, won, disagree, not_asked)
    record: dict[str, Any] = {
        "used": won,
        "winner": (textract.engine if won and textract is not None else local.engine),
        "reason": reason,
        "readings": {
            local.engine: _summary(local),
            **({"textract": _summary(textract)} if textract is not None else {}),
        },
    }
    kept = textract if won and textract is not None else _with_disagreements(local, disagree)
    raw = dict(kept.raw) if isinstance(kept.raw, dict) else {"reading": kept.raw}
    raw[SECOND_OPINION] = record
    return kept.model_copy(update={"raw": raw})


def _reason(textract: ExtractionOutcome | None, won: bool, disagree: list[str], not_asked: str | None) -> str:
    if textract is None:
        return f"Textract not asked: {not_asked or 'unavailable'}; the text layer's reading stands"
    if won:
        return "Textract's reading is clean (PROCESSED); the text layer's would have gone to review"
    if disagree:
        return f"Textract read other values for {', '.join(disagree)}; the text layer's reading stands, for review"
    why = textract.validation.errorMessage or ", ".join(textract.validation.reasons) or "not clean"
    return f"Textract's reading is not clean either ({why}); the text layer's reading stands"


def _disagreements(local: ExtractionOutcome, textract: ExtractionOutcome) -> list[str]:
    """The header fields both readings give, the text layer without doubt, with different values."""
    if local.invoice is None or textract.invoice is None:
        return []
    doubted = {reason.partition(":")[2] for reason in local.validation.reasons}
    return [
        name
        for name in _HEADER_FIELDS
        if name not in doubted
        and (mine := getattr(local.invoice, name)) is not None
        and (theirs := getattr(textract.invoice, name)) is not None
        and _comparable(mine) != _comparable(theirs)
    ]


def _comparable(value: object) -> str:
    # Case, accents' composition and spacing are how a reader prints a name, not which name it is.
    text = unicodedata.normalize("NFKC", str(value)).casefold()
    return " ".join(text.split())


def _with_disagreements(local: ExtractionOutcome, disagree: list[str]) -> ExtractionOutcome:
    if not disagree:
        return local
    reasons = [*local.validation.reasons, *(f"{DISAGREEMENT}:{name}" for name in disagree)]
    return local.model_copy(update={"validation": local.validation.model_copy(update={"reasons": reasons})})


def _summary(outcome: ExtractionOutcome) -> dict[str, Any]:
    validation = outcome.validation
    return {
        "status": validation.status.value,
        "reasons": list(validation.reasons),
        **({"failureCode": validation.errorCode.value} if validation.errorCode else {}),
    }
