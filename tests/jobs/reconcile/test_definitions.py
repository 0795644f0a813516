"""Every finding code carries its own explanation: the report shows nothing the rules do not define."""

from __future__ import annotations

from jobs.reconcile.rules.findings import DEFINITIONS, SEVERITY, Code


def test_every_code_has_a_severity_and_plain_words_for_the_report() -> None:
    missing = [code for code in Code if code not in DEFINITIONS]
    assert not missing, f"codes without a definition: {missing}"
    for code, definition in DEFINITIONS.items():
        for part in ("meaning", "cause", "remedy"):
            text = getattr(definition, part)
            assert len(text.split()) >= 4 and text.endswith("."), f"{code}: {part} is not a sentence: {text!r}"
    assert {code: d.severity for code, d in DEFINITIONS.items()} == SEVERITY
