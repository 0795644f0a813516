"""The field candidates of a page set: what the labels pair, and the seller from the layout.

Owns the one combination of the two readers: `labels` pairs printed labels with their values, and
when no label names the seller `letterhead` reads it from the page layout (a seller block, the
letterhead, a legal footer, a company-suffix line); `plausibility` then vetoes what the page
contradicts (a buyer, a bank, a heading word as the seller; a number cut from a longer one).
Kept apart from both so that neither imports the other.

Also owns the choice among alternative net and tax amounts by consistency: a page prints the tax
once per rate, and a column header ("USt.") pairs with the cell below it. When one total was read,
the net amount and the tax (one row, or the sum of up to three rate rows) that add up to it are
kept; when none add up, the first of each stays and the totals check sends the document to review.

A page whose only total label is the bare "Total" (which also heads quantity columns and a line
table's sum row) or that has none, but whose amount due is exactly a net amount plus its tax, has
that amount as its total: the sum is the evidence, and a prepayment would break it. With no total
label at all, one printed amount that is exactly a labelled net plus its tax is the total too.
"""

from __future__ import annotations

from decimal import Decimal
from itertools import combinations

from jobs.extract.ocr.labels import ALTERNATIVES, GENERIC_TOTAL_RANK, Candidate, money_in
from jobs.extract.ocr.letterhead import vendor_name
from jobs.extract.ocr.lines import Page, Segment
from jobs.extract.ocr.page_walk import label_candidates
from jobs.extract.ocr.plausibility import vetoed
from jobs.extract.parsing import parse_money

_TOLERANCE = Decimal("0.01")
_MAX_TAX_ROWS = 3
_MAX_ALTERNATIVES = 8  # a page with more candidates than this is no summary block


def pair_fields(pages: list[Page]) -> list[Candidate]:
    """The candidates per field type over all pages, in vocabulary order (see `labels`)."""
    # A labelled seller that is a party heading is dropped before the layout is asked instead;
    # the second look vetoes what the layout and the sums added.
    kept = vetoed(label_candidates(pages), pages)
    if "VENDOR_NAME" not in kept and (vendor := vendor_name(pages)):
        kept["VENDOR_NAME"] = [vendor]
    if "TOTAL" not in kept:
        _total_printed_as_the_sum(kept, pages)
    kept = vetoed(kept, pages)
    _choose_consistent(kept)
    return sorted((c for group in kept.values() for c in group), key=lambda c: c.rank)


def _amount(candidate: Candidate) -> Decimal | None:
    try:
        return parse_money(candidate.value_text).amount
    except ValueError:
        return None


def _choose_consistent(kept: dict[str, list[Candidate]]) -> None:
    """One net amount and one tax per page set: those that add up to the total, else the first."""
    totals = {a for c in kept.get("TOTAL", []) if (a := _amount(c)) is not None}
    nets = kept.get("SUBTOTAL", [])[:_MAX_ALTERNATIVES]
    taxes = kept.get("TAX", [])[:_MAX_ALTERNATIVES]
    chosen = _adding_up(next(iter(totals)), nets, taxes) if len(totals) == 1 and nets and taxes else None
    if chosen is None and nets and taxes:
        chosen = _total_from_amount_due(kept, nets, taxes)
    if chosen is not None:
        kept["SUBTOTAL"], kept["TAX"] = [chosen[0]], [chosen[1]]
        return
    for kind in ALTERNATIVES:
        if kind in kept:
            kept[kind] = kept[kind][:1]


def _total_from_amount_due(
    kept: dict[str, list[Candidate]], nets: list[Candidate], taxes: list[Candidate]
) -> tuple[Candidate, Candidate] | None:
    """The amount due as the total when only a bare "Total" (or nothing) labels one and the amount
    due is a net amount plus its tax (see the module doc); the pair that adds up to it.
    """
    if any(c.rank < GENERIC_TOTAL_RANK for c in kept.get("TOTAL", [])):
        return None
    dues = kept.get("AMOUNT_DUE", [])
    due_amounts = {a for c in dues if (a := _amount(c)) is not None}
    if len(due_amounts) != 1:
        return None
    chosen = _adding_up(next(iter(due_amounts)), nets, taxes)
    if chosen is not None:
        due = dues[0]
        kept["TOTAL"] = [Candidate("TOTAL", GENERIC_TOTAL_RANK, due.label, due.value, due.value_text, due.confidence)]
    return chosen


def _adding_up(
    total: Decimal, nets: list[Candidate], taxes: list[Candidate], tolerance: Decimal = _TOLERANCE
) -> tuple[Candidate, Candidate] | None:
    amounts = [(c, a) for c in taxes if (a := _amount(c)) is not None]
    for net in nets:
        if (net_amount := _amount(net)) is None:
            continue
        for size in range(1, min(_MAX_TAX_ROWS, len(amounts)) + 1):
            for rows in combinations(amounts, size):
                tax = sum((a for _, a in rows), Decimal(0))
                if abs(net_amount + tax - total) <= tolerance:
                    return net, _summed(rows[0][0], tax) if size > 1 else rows[0][0]
    return None


def _summed(first: Candidate, tax: Decimal) -> Candidate:
    """The tax of several rate rows as one candidate (geometry and label of the first row)."""
    return Candidate(first.type, first.rank, first.label, first.value, str(tax), first.confidence, first.currency)


def _total_printed_as_the_sum(kept: dict[str, list[Candidate]], pages: list[Page]) -> None:
    """No label names the total, but a net amount and its tax are labelled and their sum is printed
    as an amount of its own: that amount is the total (the invoice total is net plus tax by
    definition; it is printed, so it is not invented). Two different sums printed settle nothing.
    The sum must be exact: a table's foot adds rounded line amounts and may be a cent off the
    invoice's total. A labelled amount due leaves the total to it (`_total_from_amount_due`).
    """
    nets = kept.get("SUBTOTAL", [])[:_MAX_ALTERNATIVES]
    taxes = kept.get("TAX", [])[:_MAX_ALTERNATIVES]
    if not nets or not taxes or "AMOUNT_DUE" in kept:
        return
    labelled = {id(w) for group in kept.values() for c in group for w in c.value}
    printed: dict[Decimal, Segment] = {}
    for page in pages:
        for line in page.lines:
            for segment in line.segments:
                if any(id(w) in labelled for w in segment.words) or (text := money_in(segment.text)) is None:
                    continue
                printed.setdefault(parse_money(text).amount, segment)
    sums = {total for total in printed if _adding_up(total, nets, taxes, tolerance=Decimal(0)) is not None}
    if len(sums) == 1:
        total = next(iter(sums))
        segment = printed[total]
        value = money_in(segment.text) or ""
        confidence = min(w.confidence for w in segment.words)
        kept["TOTAL"] = [Candidate("TOTAL", GENERIC_TOTAL_RANK, [], segment.words, value, confidence)]
