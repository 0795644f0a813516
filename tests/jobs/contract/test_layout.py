"""Key builders and parsers round-trip; ID rules reject exactly what they promise to reject."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobs.contract import Status, layout
from jobs.errors import InvalidIdError, InvalidKeyError

REPO = Path(__file__).resolve().parents[3]

# Ids as the application makes them: NFC, no percent-encoding (the rules refuse NFD spellings
# and encoded separators or traversals; tests below check that refusal).
safe_ids = (
    st.text(
        alphabet=st.characters(
            blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp", "Zs"), blacklist_characters="#/\\.%"
        ),
        min_size=1,
        max_size=layout.MAX_ID_LENGTH,
    )
    .map(lambda s: unicodedata.normalize("NFC", s))
    .filter(lambda s: 0 < len(s) <= layout.MAX_ID_LENGTH)
)
filenames = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp"), blacklist_characters="/\\"),
    min_size=1,
    max_size=60,
).filter(lambda s: not s.startswith("..") and s != "." and "%2f" not in s.lower() and "%5c" not in s.lower())


@given(safe_ids, safe_ids, st.sampled_from(list(Status)))
def test_table_keys_round_trip(user_id: str, document_id: str, status: Status) -> None:
    assert layout.parse_user_pk(layout.user_pk(user_id)) == user_id
    assert layout.parse_document_sk(layout.document_sk(document_id)) == document_id
    assert layout.parse_status_pk(layout.status_pk(status)) == status


@given(safe_ids, safe_ids, filenames)
def test_raw_key_round_trip(user_id: str, document_id: str, filename: str) -> None:
    parsed = layout.parse_raw_key(layout.raw_key(user_id, document_id, filename))
    assert (parsed.user_id, parsed.document_id, parsed.filename) == (user_id, document_id, filename)


@given(safe_ids, safe_ids)
def test_result_key_round_trip(user_id: str, document_id: str) -> None:
    key = layout.result_key(user_id, document_id)
    assert key.endswith("/" + layout.RESULT_FILENAME)
    assert layout.parse_result_key(key) == (user_id, document_id)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("", "non-empty"),
        ("a#b", "'#'"),
        ("a/b", "'/'"),
        ("..", "traversal"),
        ("x..y", "traversal"),
        ("tab\there", "control"),
        ("zero\u200bwidth", "control"),
        (" padded", "whitespace"),
        ("x" * (layout.MAX_ID_LENGTH + 1), "max"),
        ("%2e%2e", "decodes to a path separator or traversal"),
        ("a%2Fb", "decodes to a path separator or traversal"),
        ("cafe\u0301", "NFC"),
    ],
)
def test_bad_ids_name_the_offending_value(value: str, fragment: str) -> None:
    with pytest.raises(InvalidIdError) as info:
        layout.validate_id(value, "userId")
    assert fragment in str(info.value)
    assert "userId" in str(info.value)


@pytest.mark.parametrize(
    "key",
    [
        "raw/u1/d1",
        "raw/u1/d1/sub/file.pdf",
        "raw/u1/../file.pdf",
        "raw/u#1/d1/f.xml",
        "other/u1/d1/f.xml",
        "raw//d1/f.xml",
        "raw/u1/d1/",
    ],
)
def test_raw_keys_outside_the_layout_are_rejected(key: str) -> None:
    with pytest.raises(InvalidKeyError):
        layout.parse_raw_key(key)


@pytest.mark.parametrize("name", ["..%2fetc", "a%2Fb.xml", "x%5cy.pdf", "..hidden"])
def test_filenames_with_encoded_separators_or_leading_dots_are_refused(name: str) -> None:
    with pytest.raises(InvalidIdError, match="filename"):
        layout.validate_filename(name)


def test_result_key_must_end_in_result_json() -> None:
    with pytest.raises(InvalidKeyError):
        layout.parse_result_key("processed/u1/d1/other.json")


@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 1, 1), timezones=st.just(UTC)))
def test_timestamps_are_millisecond_utc_and_sort_in_time_order(moment: datetime) -> None:
    text = layout.format_ts(moment)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", text)
    assert layout.parse_ts(text) == moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    later = layout.format_ts(moment + timedelta(milliseconds=1))
    assert later > text


def test_naive_times_are_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        layout.format_ts(datetime(2026, 1, 1))


def test_names_follow_the_stage() -> None:
    assert layout.table_name("dev") == "docuflow-dev-documents-table"
    assert layout.status_index_name("dev") == "docuflow-dev-documents-status-createdAt-index"


def test_layout_prefixes_are_spelled_in_one_source_module() -> None:
    """USER#, DOC#, STATUS# and processed/ appear in exactly one module outside tests."""
    sources = [
        p
        for p in REPO.rglob("*.py")
        if not any(part in (".venv", "tests", "node_modules", ".local") for part in p.relative_to(REPO).parts)
    ]
    for token in ("USER#", "DOC#", "STATUS#", "processed/"):
        spelled = sorted(str(p.relative_to(REPO)) for p in sources if token in p.read_text(encoding="utf-8"))
        assert spelled == ["jobs/contract/layout.py"], (token, spelled)
