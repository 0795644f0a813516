"""The athena engine: the rules' Trino SQL (`sql.query`) in the reconcile's Athena workgroup, over
the Glue tables the stack declares on S3 Inventory (Parquet, `dt` partitions) and the table export.

One run: (1) the table export for the run's point in time, started and awaited unless
`--dynamodb-export` names one; (2) the inventories, the latest of each bucket unless
`--s3-inventory` names them, each checked for its `hive/dt=…` partition; (3) a count query and
(4) `UNLOAD (query) TO` the run's report prefix (`…/athena/`) as Parquet, read back and rendered
by the same `findings.render` as every engine. Bad inputs (an export still in progress, a missing
partition, a failed query, the bytes-scanned cutoff) raise domain errors: exit 2, no report.

The job reads only manifests and the unloaded findings; Athena reads the data with the task
role's credentials. What the stack must provide is listed in docs/reconcile.md.
"""

from __future__ import annotations

import io
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import polars as pl

from jobs.contract import layout
from jobs.errors import ExportNotReadyError, ReconcileInputError, S3ObjectMissingError
from jobs.reconcile.engines import ParamsFor, StopCheck, no_stop
from jobs.reconcile.engines.athena_state import IcebergNight, TableRead, token
from jobs.reconcile.inputs.export import EXPORT_SUMMARY, FULL_EXPORT
from jobs.reconcile.inputs.inventory import delivered_at, latest_manifest
from jobs.reconcile.rules import sql_rules as sql
from jobs.reconcile.rules.findings import WIDE_SCHEMA, EngineFindings
from jobs.reconcile.rules.frames import empty

if TYPE_CHECKING:
    from jobs.settings import JobSettings
    from jobs.store.athena import AthenaQueries
    from jobs.store.s3 import Buckets
    from jobs.store.table_export import TableExports

logger = logging.getLogger(__name__)

UNLOAD_DIR = "athena/"


@dataclass(frozen=True)
class InventoryPartition:
    source_bucket: str
    manifest: str  # s3:// of manifest.json
    dt: str  # the Hive partition value, YYYY-MM-DD-HH-MM
    created: datetime


@dataclass(frozen=True)
class AthenaInputs:
    """What one Athena run reads and where it unloads its findings."""

    run_id: str  # names the run's idempotency tokens
    report_prefix: str  # the findings are unloaded under it, in UNLOAD_DIR
    export: str | None = None  # a completed full export (s3://); None: the run starts one
    manifests: tuple[str, ...] = ()  # inventory manifests (s3://); none: the newest of each bucket
    nightly: bool = False  # the kept Iceberg table brought forward (athena_state), not an export


def dt_of(manifest_key: str) -> str:
    """`…/2026-11-30T01-00Z/manifest.json` → `2026-11-30-01-00` (S3 Inventory's Hive `dt`)."""
    return delivered_at(manifest_key).strftime("%Y-%m-%d-%H-%M")


class AthenaEngine:
    def __init__(
        self,
        settings: JobSettings,
        buckets: Buckets,
        queries: AthenaQueries,
        exports: TableExports,
        inputs: AthenaInputs,
    ) -> None:
        self.settings = settings
        self.buckets = buckets
        self.queries = queries
        self.exports = exports
        self.inputs = inputs

    # --- inputs ------------------------------------------------------------------------------
    def _json(self, uri: str) -> dict[str, object]:
        bucket, key = layout.parse_s3_uri(uri)
        try:
            data = json.loads(self.buckets.get_bytes(bucket, key))
        except ValueError as exc:
            raise ReconcileInputError(f"{uri} is not JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ReconcileInputError(f"{uri} is not a JSON object")
        return data

    def export(self, location: str | None, point_in_time: datetime) -> tuple[str, datetime, int | None]:
        """(export id, export time, item count) of a completed export, started here if none given."""
        s = self.settings
        if location is None:
            if not s.store.table_arn:
                raise ReconcileInputError("no --dynamodb-export and no DOCUFLOW_TABLE_ARN to start one with")
            arn = self.exports.start(
                s.store.table_arn, point_in_time, s.reconcile.export_bucket, s.reconcile.export_prefix
            )
            location = self.exports.wait(arn).directory
        summary_uri = location.rstrip("/") + "/" + EXPORT_SUMMARY if not location.endswith(EXPORT_SUMMARY) else location
        try:
            summary = self._json(summary_uri)
        except S3ObjectMissingError as exc:
            raise ExportNotReadyError(
                f"{summary_uri} does not exist: the export is still in progress or failed"
            ) from exc
        if summary.get("outputFormat", "DYNAMODB_JSON") != "DYNAMODB_JSON":
            raise ReconcileInputError(f"{summary_uri}: outputFormat {summary.get('outputFormat')!r} is not supported")
        if summary.get("exportType", FULL_EXPORT) != FULL_EXPORT:
            raise ReconcileInputError(
                f"{summary_uri}: an incremental export holds changes, not the table: give a full export"
            )
        export_id = summary_uri.rsplit("/", 2)[-2]
        try:
            exported = datetime.fromisoformat(str(summary["exportTime"]).replace("Z", "+00:00")).astimezone(UTC)
        except (KeyError, ValueError) as exc:
            raise ReconcileInputError(f"{summary_uri} has no readable exportTime") from exc
        count = summary.get("itemCount")
        return export_id, exported, count if isinstance(count, int) else None

    def latest_manifest(self, source_bucket: str) -> str:
        """The newest inventory manifest of `source_bucket` under the configured destination."""
        s = self.settings
        return latest_manifest(
            self.buckets,
            s.reconcile.inventory_bucket,
            s.reconcile.inventory_prefix,
            s.reconcile.inventory_config_id,
            source_bucket,
        )

    def partition(self, manifest_uri: str) -> InventoryPartition:
        manifest = self._json(manifest_uri)
        source = str(manifest.get("sourceBucket", ""))
        fmt = str(manifest.get("fileFormat", "")).upper()
        if fmt != "PARQUET":
            raise ReconcileInputError(
                f"{manifest_uri}: fileFormat {fmt or '?'}: the Athena tables read Parquet inventories"
            )
        files = manifest.get("files")
        if isinstance(files, list):
            keys = [str(f.get("key")) for f in files if isinstance(f, dict)]
            if len(keys) != len(set(keys)):
                raise ReconcileInputError(f"{manifest_uri} lists a data file twice (its rows would count twice)")
        try:
            created = datetime.fromtimestamp(int(str(manifest["creationTimestamp"])) / 1000, UTC)
        except (KeyError, ValueError) as exc:
            raise ReconcileInputError(f"{manifest_uri}: creationTimestamp is not epoch milliseconds") from exc
        bucket, key = layout.parse_s3_uri(manifest_uri)
        dt = dt_of(key)
        symlink = f"{key.rsplit('/', 2)[0]}/hive/dt={dt}/symlink.txt"
        if self.buckets.head(bucket, symlink) is None:
            raise ReconcileInputError(
                f"missing partition dt={dt}: s3://{bucket}/{symlink} does not exist (inventory not delivered?)"
            )
        return InventoryPartition(source, manifest_uri, dt, created)

    # --- the run -------------------------------------------------------------------------------
    def inventories(self) -> tuple[InventoryPartition, InventoryPartition]:
        """The raw and the processed bucket's inventory partitions: the given ones, else the newest."""
        s = self.settings
        manifests = list(self.inputs.manifests) or [
            self.latest_manifest(b) for b in (s.store.raw_bucket, s.store.processed_bucket)
        ]
        partitions = {p.source_bucket: p for p in map(self.partition, manifests)}
        for needed in (s.store.raw_bucket, s.store.processed_bucket):
            if needed not in partitions:
                raise ReconcileInputError(f"no S3 Inventory manifest for bucket {needed!r}")
        return partitions[s.store.raw_bucket], partitions[s.store.processed_bucket]

    def exported(self) -> TableRead:
        """The table as a full export: the one given, or one started for the run's point in time."""
        s = self.settings
        now = layout.utc_now().replace(second=0, microsecond=0)
        export_id, export_time, item_count = self.export(self.inputs.export, now)
        relation = (
            f'(SELECT item FROM "{s.reconcile.glue_database}"."{s.reconcile.glue_export_table}" '
            f"WHERE export_id = {sql.lit(export_id)})"
        )
        return TableRead(relation, export_time, f"export {export_id}", item_count)

    def relations(self, table: str, raw: InventoryPartition, processed: InventoryPartition) -> sql.Relations:
        """The Glue tables the query reads, each narrowed to this run's table and partitions."""
        s = self.settings
        db = f'"{s.reconcile.glue_database}"'
        return sql.Relations(
            export=table,
            raw_inventory=f'(SELECT * FROM {db}."{s.reconcile.glue_raw_inventory_table}" WHERE dt = {sql.lit(raw.dt)})',
            processed_inventory=(
                f'(SELECT * FROM {db}."{s.reconcile.glue_processed_inventory_table}" '
                f"WHERE dt = {sql.lit(processed.dt)})"
            ),
        )

    def find(self, params_for: ParamsFor, stop: StopCheck = no_stop) -> EngineFindings:
        """Each query is Athena's to run (a stop waits out the one in flight, polled by the store);
        a stop is taken between them, before the next is started.
        """
        s, run_id = self.settings, self.inputs.run_id
        if self.inputs.nightly:
            table = IcebergNight(s, self.buckets, self.queries, self.exports, run_id).bring_forward()
        else:
            table = self.exported()
        stop("after the table was read")
        raw, processed = self.inventories()
        relations = self.relations(table.relation, raw, processed)
        taken_at = {"table": table.taken_at, "raw": raw.created, "processed": processed.created}
        params = params_for(min(taken_at.values()))
        counted = self.queries.run(
            f"SELECT (SELECT count(*) FROM {relations.raw_inventory}), "
            f"(SELECT count(*) FROM {relations.processed_inventory})",
            token(run_id, "counts"),
            "object counts",
        )
        raw_count, processed_count = (int(v or 0) for v in self.queries.rows(counted.query_id)[0])
        stop("before the reconcile query")
        unloaded = self.inputs.report_prefix + UNLOAD_DIR
        target = layout.s3_uri(s.store.reports_bucket, unloaded)
        unload = (
            f"UNLOAD ({sql.query(relations, params)}) TO {sql.lit(target)} "
            "WITH (format = 'PARQUET', compression = 'ZSTD')"
        )
        found = self.queries.run(unload, token(run_id, "findings"), "reconcile query")
        ran = [*table.queries, counted, found]
        stats: dict[str, object] = {
            "workgroup": s.reconcile.athena_workgroup,
            "queryIds": [q.query_id for q in ran],
            "bytesScanned": sum(q.bytes_scanned for q in ran),
            "unloadedTo": target,
        }
        if table.night is not None:
            stats["night"] = table.night
        return EngineFindings(
            self.read_unloaded(unloaded),
            taken_at=taken_at,
            inputs={"table": table.where, "raw": raw.manifest, "processed": processed.manifest},
            sizes={
                "table": table.item_count if table.item_count is not None else -1,
                "raw": raw_count,
                "processed": processed_count,
            },
            stats=stats,
        )

    def read_unloaded(self, prefix: str) -> pl.DataFrame:
        bucket = self.settings.store.reports_bucket
        frames = [
            pl.read_parquet(io.BytesIO(self.buckets.get_bytes(bucket, obj.key)))
            for page in self.buckets.list_pages(bucket, prefix)
            for obj in page
            if obj.size
        ]
        return pl.concat(frames, how="diagonal_relaxed") if frames else empty(WIDE_SCHEMA)
