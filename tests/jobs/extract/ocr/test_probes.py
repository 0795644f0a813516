"""The probe set (tests/data/probes): adversarial layouts two probe rounds found, 39 templates.

Two documents a template (78), rendered at test time. Nothing PROCESSED may carry a wrong header
value (the hard requirement); the fields right and the documents PROCESSED hold the floors below.
"""

from __future__ import annotations

import sys

from ocr_helpers import REPO_ROOT, score

sys.path.insert(0, str(REPO_ROOT))
from tests.data.probes.render import ROUNDS, cases, render

PER_TEMPLATE = 2
# Measured 4 Dec 2026 on main (57d29b6), 2 a template: 323 of 390 fields right, 20 of 78 documents PROCESSED.
FLOORS = {"fields": 323, "processed": 20}


def test_the_set_has_both_rounds_and_every_template_once() -> None:
    ids = [c.id for c in cases(PER_TEMPLATE)]
    assert len(ids) == len(set(ids)) == PER_TEMPLATE * sum(len(t) for _, t in ROUNDS.values()) == 78
    assert {c.round for c in cases(1)} == {1, 2}


def test_nothing_processed_is_wrong_and_the_floors_hold() -> None:
    probes = list(cases(PER_TEMPLATE))
    expected = {case.id: case.expected for case in probes}
    scored = score(probes, render)
    wrong = [
        f"{case_id}: {field} expected {expected[case_id][field]!r} read {read!r}"
        for case_id, mismatches in scored.wrong
        for field, read in mismatches.items()
    ]
    assert wrong == [], "PROCESSED with a wrong header value:\n" + "\n".join(wrong)
    assert scored.right >= FLOORS["fields"], f"{scored.right} fields right, floor {FLOORS['fields']}"
    assert scored.processed >= FLOORS["processed"], f"{scored.processed} PROCESSED, floor {FLOORS['processed']}"
