"""The rules of a document's life that need object versions, legal holds or tags: pure, no I/O.

- RETENTION_TAG_MISMATCH (--deep): the `retention` tag of the item's raw object or result.json is
  not the item's retention class, so lifecycle would expire the object on another day.
- LEGAL_HOLD_MISSING: a version of a held document's objects is not under a legal hold (a hold
  placed before a new upload, or half-placed): lifecycle or an erasure could delete it.
- NOT_HARD_DELETED: a deleted document past its hard-delete date (and the expiry gap) still has
  versions or delete markers: lifecycle's grace-period rule is not doing its work.

Scoped to the live polars run and the nightly polars run, on purpose: these facts are in neither
the table export nor the S3 Inventory the files and Athena engines read (the inventories list
current versions, without tags or Object Lock fields), and gathering them costs requests per
document. So they are asked only for the few items that need them (`candidates`): held items,
items past their hard-delete date, and, under a live --deep (which already reads every
result.json), each finished item's two tags. The nightly run picks its held and hard-deleted
items from the table it judged (`ReconcileRun.nightly_lifecycle`).
The other lifecycle cases (a deleted document in its grace, one past its retention not yet
reached by TTL or lifecycle, a held one) are in the rules every engine runs (`rules`).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from jobs.contract import TERMINAL, layout
from jobs.reconcile.rules.findings import Code
from jobs.reconcile.rules.frames import Snapshot, empty
from jobs.reconcile.rules.keys import unquoted, with_keys
from jobs.reconcile.rules.params import RuleParams

_IDS = {"userId": pl.String(), "documentId": pl.String(), "pk": pl.String(), "sk": pl.String()}
TAGS_SCHEMA: dict[str, pl.DataType] = {
    **_IDS,
    "bucket": pl.String(),
    "key": pl.String(),
    "retentionClass": pl.String(),
    "tag": pl.String(),  # the object's retention tag, null when it has none
}
HOLDS_SCHEMA: dict[str, pl.DataType] = {
    **_IDS,
    "bucket": pl.String(),
    "key": pl.String(),
    "versionId": pl.String(),
    "legalHoldAt": pl.String(),
    "held": pl.Boolean(),
}
LEFTOVERS_SCHEMA: dict[str, pl.DataType] = {
    **_IDS,
    "bucket": pl.String(),
    "key": pl.String(),  # the document's prefix in that bucket
    "hardDeleteAt": pl.String(),
    "versions": pl.Int64(),  # versions and delete markers still there
}
FINISHED = tuple(s.value for s in TERMINAL)


@dataclass(frozen=True)
class Candidates:
    """The items whose objects must be looked at version by version, or tag by tag."""

    held: pl.DataFrame
    past_hard_delete: pl.DataFrame
    tagged: pl.DataFrame


def candidates(snapshot: Snapshot, params: RuleParams) -> Candidates:
    """From the snapshot: the held items, those past their hard-delete date, and (--deep) the
    finished ones with a retention class, with whether their raw object is still the upload they
    name (`rawCurrent`: a newer upload is untagged until processed, which is STALE_RESULT's to
    report; a result.json is tagged by whoever writes it, with the document's class).
    """
    docs = with_keys(snapshot.items.lazy(), params).collect()  # + rawKey and resultKey; no markers
    hard_deleted_before = layout.format_ts(params.as_of - params.expiry_gap)
    uploads = snapshot.raw_objects.select(pl.col("key").alias("rawKey"), pl.col("etag").alias("_objectEtag"))
    same = unquoted(pl.col("rawEtag")).eq_missing(unquoted(pl.col("_objectEtag")))
    docs = docs.join(uploads, on="rawKey", how="left").with_columns(same.alias("rawCurrent")).drop("_objectEtag")
    tagged = docs.filter(pl.col("retentionClass").is_not_null() & pl.col("status").is_in(FINISHED))
    return Candidates(
        held=docs.filter(pl.col("legalHoldAt").is_not_null()),
        past_hard_delete=docs.filter(pl.col("hardDeleteAt") <= hard_deleted_before),
        tagged=tagged if params.deep else tagged.clear(),
    )


def _identity() -> dict[str, pl.Expr]:
    return {
        "user_id": pl.col("userId"),
        "document_id": pl.col("documentId"),
        "pk": pl.col("pk"),
        "sk": pl.col("sk"),
        "bucket": pl.col("bucket"),
        "key": pl.col("key"),
    }


def retention_tag_mismatch(tags: pl.DataFrame) -> pl.DataFrame:
    wrong = tags.filter(pl.col("tag").ne_missing(pl.col("retentionClass")))
    return wrong.select(
        pl.lit(Code.RETENTION_TAG_MISMATCH.value).alias("code"),
        *[e.alias(n) for n, e in _identity().items()],
        pl.col("retentionClass").alias("ev_retention_class"),
        pl.col("tag").alias("ev_tag"),
    )


def legal_hold_missing(holds: pl.DataFrame) -> pl.DataFrame:
    unheld = holds.filter(~pl.col("held"))
    return unheld.select(
        pl.lit(Code.LEGAL_HOLD_MISSING.value).alias("code"),
        *[e.alias(n) for n, e in _identity().items()],
        pl.col("legalHoldAt").alias("ev_legal_hold_at"),
        pl.col("versionId").alias("ev_version_id"),
    )


def not_hard_deleted(leftovers: pl.DataFrame) -> pl.DataFrame:
    left = leftovers.filter(pl.col("versions") > 0)
    return left.select(
        pl.lit(Code.NOT_HARD_DELETED.value).alias("code"),
        *[e.alias(n) for n, e in _identity().items()],
        pl.col("hardDeleteAt").alias("ev_hard_delete_at"),
        pl.col("versions").alias("ev_versions"),
    )


@dataclass(frozen=True)
class LifecycleFacts:
    """What the gatherer (jobs.reconcile.inputs.versions) found for the candidates."""

    tags: pl.DataFrame
    holds: pl.DataFrame
    leftovers: pl.DataFrame

    @classmethod
    def none(cls) -> LifecycleFacts:
        return cls(empty(TAGS_SCHEMA), empty(HOLDS_SCHEMA), empty(LEFTOVERS_SCHEMA))


def find_wide(facts: LifecycleFacts) -> pl.DataFrame:
    """The three rules' findings as wide rows (findings.WIDE_SCHEMA columns, the rest left out)."""
    parts = [retention_tag_mismatch(facts.tags), legal_hold_missing(facts.holds), not_hard_deleted(facts.leftovers)]
    return pl.concat(parts, how="diagonal_relaxed")
