"""The live facts of the lifecycle rules (jobs.reconcile.rules.lifecycle): tags, legal holds, versions.

Asked only for the candidates the rules name, a few requests each: for a held document the
version listings of its two prefixes and each version's legal hold; for one past its
hard-delete date the same listings; under --deep, the retention tag of each finished document's
raw object and result.json. Documents are looked at on the run's I/O threads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import polars as pl

from jobs.contract import layout
from jobs.reconcile.rules.lifecycle import HOLDS_SCHEMA, LEFTOVERS_SCHEMA, TAGS_SCHEMA, Candidates, LifecycleFacts

if TYPE_CHECKING:
    from jobs.store.s3 import Buckets

Row = dict[str, Any]


class VersionFacts:
    def __init__(self, buckets: Buckets, raw_bucket: str, processed_bucket: str, threads: int) -> None:
        self._buckets = buckets
        self._raw = raw_bucket
        self._processed = processed_bucket
        self._threads = threads

    def gather(self, found: Candidates) -> LifecycleFacts:
        return LifecycleFacts(
            tags=self._each(found.tagged, self._tags, TAGS_SCHEMA),
            holds=self._each(found.held, self._holds, HOLDS_SCHEMA),
            leftovers=self._each(found.past_hard_delete, self._leftovers, LEFTOVERS_SCHEMA),
        )

    def _each(
        self, items: pl.DataFrame, one: Callable[[Row], list[Row]], schema: dict[str, pl.DataType]
    ) -> pl.DataFrame:
        rows = items.to_dicts()
        if not rows:
            return pl.DataFrame(schema=schema)
        with ThreadPoolExecutor(max(1, min(self._threads, len(rows)))) as pool:
            found = [row for part in pool.map(one, rows) for row in part]
        return pl.DataFrame(found, schema=schema, orient="row")

    def _places(self, item: Row) -> Iterable[tuple[str, str]]:
        user, doc = item["userId"], item["documentId"]
        yield self._raw, layout.raw_document_prefix(user, doc)
        yield self._processed, layout.result_document_prefix(user, doc)

    @staticmethod
    def _ids(item: Row) -> Row:
        return {k: item[k] for k in ("userId", "documentId", "pk", "sk")}

    def _tags(self, item: Row) -> list[Row]:
        rows = []
        objects = [(self._processed, item["resultKey"])]
        if item["rawCurrent"]:
            objects.append((self._raw, item["rawKey"]))
        for bucket, key in objects:
            tags = self._buckets.tags(bucket, key) if key else None
            if tags is None:
                continue  # no current object: MISSING_RAW / MISSING_RESULT say so
            rows.append(
                {
                    **self._ids(item),
                    "bucket": bucket,
                    "key": key,
                    "retentionClass": item["retentionClass"],
                    "tag": tags.get(layout.RETENTION_TAG),
                }
            )
        return rows

    def _holds(self, item: Row) -> list[Row]:
        rows = []
        for bucket, prefix in self._places(item):
            for version in self._buckets.versions(bucket, prefix):
                if version.delete_marker:
                    continue  # a marker carries no hold (and hides nothing a hold protects)
                rows.append(
                    {
                        **self._ids(item),
                        "bucket": bucket,
                        "key": version.key,
                        "versionId": version.version_id,
                        "legalHoldAt": item["legalHoldAt"],
                        "held": self._buckets.legal_hold(version),
                    }
                )
        return rows

    def _leftovers(self, item: Row) -> list[Row]:
        return [
            {
                **self._ids(item),
                "bucket": bucket,
                "key": prefix,
                "hardDeleteAt": item["hardDeleteAt"],
                "versions": len(self._buckets.versions(bucket, prefix)),
            }
            for bucket, prefix in self._places(item)
        ]
