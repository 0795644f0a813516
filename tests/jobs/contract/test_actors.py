"""Actors: every new version of an item names who wrote it, in a form the audit log can read."""

from __future__ import annotations

import pytest

from jobs.contract import DocumentItem, RetentionPolicy, Status, tombstone
from jobs.contract.actors import ActorKind, actor, actor_kind, check_actor
from tests.jobs.contract.test_models import NOW, make_item


def test_an_actor_is_kind_and_id() -> None:
    assert actor(ActorKind.REVIEWER, "alice") == "reviewer:alice"
    assert actor_kind("ingest:20261201-ab") is ActorKind.INGEST


@pytest.mark.parametrize("bad", ["", "alice", "robot:x", "reviewer:", "reviewer:a b", "reviewer:" + "x" * 201])
def test_malformed_actors_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="actor"):
        check_actor(bad)


def test_an_item_refuses_a_malformed_actor() -> None:
    with pytest.raises(ValueError, match="actor"):
        make_item(updatedBy="nobody")


def test_a_new_version_must_name_its_actor() -> None:
    item = make_item(updatedBy="ingest:run1")
    with pytest.raises(TypeError, match="names its actor"):
        item.evolve(version=item.version + 1)
    # A copy that is not a new version (the same write, completed) keeps its actor.
    assert item.evolve(resultEtag='"r"').updatedBy == "ingest:run1"


def test_a_tombstone_is_written_by_whoever_found_the_object_gone() -> None:
    done = make_item(status=Status.PROCESSED, updatedBy="ingest:run1")
    gone = tombstone(done, NOW, "raw object deleted", "repair:run2", RetentionPolicy())
    assert (gone.status, gone.version, gone.updatedBy) == (Status.DELETED, done.version + 1, "repair:run2")
    assert DocumentItem.from_item(gone.to_item()).updatedBy == "repair:run2"
