"""The run's memory of which document landed holding an identity: a hint, bounded, per user."""

from __future__ import annotations

from jobs.contract import DuplicateKind
from jobs.ingest.sightings import Sightings

CONTENT, INVOICE = DuplicateKind.CONTENT, DuplicateKind.INVOICE


def test_a_holder_is_named_to_other_documents_of_its_user_only() -> None:
    seen = Sightings()
    seen.saw("u1", {CONTENT: "c1", INVOICE: "i1"}, "d1")
    assert seen.holders("u1", {CONTENT: "c1", INVOICE: "i1"}, "d2") == {CONTENT: "d1", INVOICE: "d1"}
    assert seen.holders("u1", {CONTENT: "c1", INVOICE: "i2"}, "d2") == {CONTENT: "d1"}
    assert seen.holders("u1", {CONTENT: "c1"}, "d1") == {}  # a document is not its own duplicate
    assert seen.holders("u2", {CONTENT: "c1"}, "d2") == {}  # nor another user's
    assert seen.holders("u1", {INVOICE: "c1"}, "d2") == {}  # a digest counts under its own kind


def test_forget_drops_only_the_entries_naming_that_document() -> None:
    seen = Sightings()
    seen.saw("u1", {CONTENT: "c1", INVOICE: "i1"}, "d1")
    seen.saw("u1", {INVOICE: "i1"}, "d3")  # taken over since
    seen.forget("u1", {CONTENT: "c1", INVOICE: "i1"}, "d1")
    assert seen.holders("u1", {CONTENT: "c1", INVOICE: "i1"}, "d2") == {INVOICE: "d3"}


def test_the_least_recently_seen_identities_go_first_beyond_the_limit() -> None:
    seen = Sightings(limit=3)
    for n in range(3):
        seen.saw("u1", {CONTENT: f"c{n}"}, f"d{n}")
    seen.saw("u1", {CONTENT: "c0"}, "d0")  # seen again: the newest now
    seen.saw("u1", {CONTENT: "c3"}, "d3")
    found = {n: seen.holders("u1", {CONTENT: f"c{n}"}, "x") for n in range(4)}
    assert found == {0: {CONTENT: "d0"}, 1: {}, 2: {CONTENT: "d2"}, 3: {CONTENT: "d3"}}
