"""Line hierarchies: which line amounts the totals rules count, and whether each group adds up.

A flat invoice counts every line. With a hierarchy (CII ParentLineID with LineStatusReasonCode,
UBL sub-lines) BR-CO-10 counts the top-level lines only, each once: a parent stands for the lines
beneath it, or, when it carries no amount, their sum does. INFORMATION lines never count. Each
parent with an amount must equal the sum of the counted lines directly beneath it (XRechnung
BR-DEX-02, Factur-X EXTENDED GROUP lines). A line whose parent is missing counts at the top, and a
cycle of parents is entered at its first line and fails the group check, so a broken hierarchy
shows as a totals mismatch, never as a lost amount.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from jobs.contract.invoice import LineItem, LineStatus


@dataclass(frozen=True, slots=True)
class LineSum:
    total: Decimal | None  # None: an amount the rule needs is missing, so BR-CO-10 cannot run
    groups_consistent: bool


def counted_line_sum(lines: Sequence[LineItem], tolerance: Decimal) -> LineSum:
    if not any(line.parentLineId or line.lineStatus for line in lines):
        amounts = [line.amount for line in lines if line.amount is not None]
        if not lines or len(amounts) < len(lines):
            return LineSum(None, True)
        return LineSum(sum(amounts, Decimal(0)), True)
    counted = [line for line in lines if line.lineStatus is not LineStatus.INFORMATION]
    ids = {line.lineId for line in counted if line.lineId}
    children: dict[str, list[LineItem]] = defaultdict(list)
    for line in counted:
        if line.parentLineId and line.parentLineId in ids and line.parentLineId != line.lineId:
            children[line.parentLineId].append(line)
    walker = _Walker(children, tolerance)
    top = [line for line in counted if not (line.parentLineId and line.parentLineId in ids)]
    values = [walker.value(line) for line in top]
    # Lines only reachable through a cycle of parents: entered at the first one.
    values += [walker.value(line) for line in counted if id(line) not in walker.seen]
    known = [value for value in values if value is not None]
    if not values or len(known) < len(values):
        return LineSum(None, walker.consistent)
    return LineSum(sum(known, Decimal(0)), walker.consistent)


class _Walker:
    def __init__(self, children: dict[str, list[LineItem]], tolerance: Decimal) -> None:
        self.children = children
        self.tolerance = tolerance
        self.seen: set[int] = set()
        self.consistent = True

    def value(self, line: LineItem) -> Decimal | None:
        """The amount `line` contributes: its own, else the sum beneath it."""
        self.seen.add(id(line))
        children = self.children.get(line.lineId or "", ())
        below = [child for child in children if id(child) not in self.seen]
        if len(below) < len(children):  # a child met before: the parents form a cycle
            self.consistent = False
        if not below:
            return line.amount
        values = [self.value(child) for child in below]
        known = [v for v in values if v is not None]
        total = sum(known, Decimal(0)) if len(known) == len(values) else None
        if line.amount is None:
            return total
        if total is not None and abs(line.amount - total) > self.tolerance:
            self.consistent = False
        return line.amount
