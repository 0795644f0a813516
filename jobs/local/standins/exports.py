"""A stand-in for DynamoDB's table exports on the local stack: DynamoDB Local serves none of
ExportTableToPointInTime, DescribeExport or DescribeContinuousBackups.

`attach` registers botocore handlers on the job's own DynamoDB client that answer those three
calls the way DynamoDB does, so everything else the job does (the export adapter, the nightly
chain, the readers of the files) runs unchanged; it refuses a client whose endpoint is not on
loopback. No job code calls it: botocore does, through its client-plugin hook. With
`BOTOCORE_EXPERIMENTAL__PLUGINS=docuflow_table_exports=jobs.local.standins.exports` in the
environment (`PLUGIN_ENV`, which `local up` and the tests' stack set), every client botocore
creates is passed to
`initialize_client_plugin`, which attaches the stand-in to the DynamoDB ones. The job image does not
carry this package, so production cannot load it even with the variable set.

How it exports: a Scan of the table when the call is made, kept as a snapshot (gzip JSON lines of
DynamoDB JSON) under `standin/` of the export prefix and named by the export's time. A full export
writes the Scan in DynamoDB's layout (`writers.export_objects`). An incremental export of
[start, end) diffs the snapshot taken at `start` with the Scan at `end`, as DynamoDB reports a
window: an item whose image changed (new, changed, deleted and re-created) with its final image,
one gone since `start` by its keys, one created and deleted in between not at all. A Scan cannot
see the table at another time than now, so: a window whose start the stand-in did not scan is
refused (ValidationException), the latest restorable time is the stand-in's clock (`clock`,
replaceable in tests that move nights forward), and nothing may write while it scans.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import boto3
from botocore.awsrequest import AWSResponse
from botocore.compat import HTTPHeaders
from botocore.exceptions import ClientError

from jobs.contract import layout
from jobs.local.standins.advance import check_local
from jobs.local.writers import change_line, export_line, export_objects
from jobs.reconcile.inputs.export import EXPORT_SUMMARY
from jobs.settings import JobSettings

if TYPE_CHECKING:
    from botocore.client import BaseClient
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_s3 import S3Client

STANDIN_PREFIX = "standin/"
ITEMS_PER_FILE = 50_000  # lines per data file, as DynamoDB writes several
PITR_DAYS = 35
_PARAMS = "docuflow.standin.params"
_KEY = (layout.PK_ATTR, layout.SK_ATTR)
_ID = "docuflow-export-standin"
PLUGIN_ENV = "BOTOCORE_EXPERIMENTAL__PLUGINS"  # botocore's variable: `name=module`, comma-separated
PLUGIN = f"docuflow_table_exports={__name__}"


def clock() -> datetime:
    """The stand-in's now: what it reports as the latest restorable time."""
    return layout.utc_now()


def initialize_client_plugin(client: BaseClient) -> None:
    """The hook botocore calls for each client it creates (botocore.plugin): the stand-in on every
    DynamoDB client, at the settings' export location; any other client is left as it is.
    """
    if client.meta.service_model.service_name == "dynamodb":
        settings = JobSettings.from_env()
        attach(client, settings.reconcile.export_bucket, settings.reconcile.export_prefix)


def attach(client: BaseClient, bucket: str, prefix: str) -> None:
    """Answer the table-export calls of `client` (the job's DynamoDB client) with the stand-in,
    which keeps what it needs under `prefix` of `bucket` (the stack's export location). Attaching
    twice keeps the first (each handler has its id).
    """
    check_local(client.meta.endpoint_url)
    endpoint, region = client.meta.endpoint_url, client.meta.region_name

    @functools.cache
    def standin() -> ExportStandIn:
        # Its own clients, made at the first export call rather than with every DynamoDB client:
        # what it reads and writes stands for DynamoDB's work, not the job's.
        session = boto3.session.Session(region_name=region)
        return ExportStandIn(session.client("dynamodb", endpoint_url=endpoint), session.client("s3"), bucket, prefix)

    for operation, answer in _ANSWERS.items():
        client.meta.events.register(
            f"before-parameter-build.dynamodb.{operation}", _keep_params, unique_id=f"{_ID}-params-{operation}"
        )
        # A before-call handler's answer replaces the request (botocore's emit_until_response,
        # as its Stubber does); the stubs type handlers as returning None.
        client.meta.events.register(
            f"before-call.dynamodb.{operation}",
            _answering(standin, answer),  # type: ignore[arg-type]
            unique_id=f"{_ID}-call-{operation}",
        )


def _keep_params(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
    context[_PARAMS] = dict(params)


def _answering(
    standin: Callable[[], ExportStandIn], answer: _Answer
) -> Callable[..., tuple[AWSResponse, dict[str, Any]]]:
    """A before-call handler: the stand-in's answer instead of a request (or its error, as the
    service would send it, which botocore raises as a ClientError).
    """

    def handler(context: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        try:
            return AWSResponse("standin", 200, HTTPHeaders(), None), answer(standin(), context[_PARAMS])
        except ClientError as exc:
            return AWSResponse("standin", 400, HTTPHeaders(), None), dict(exc.response)

    return handler


def _refused(message: str) -> ClientError:
    return ClientError({"Error": {"Code": "ValidationException", "Message": message}}, "ExportTableToPointInTime")


def _key(item: dict[str, Any]) -> str:
    return json.dumps([item[a] for a in _KEY], sort_keys=True)


class ExportStandIn:
    """DynamoDB's export service, played over a Scan; its exports and Scans kept under `prefix`
    of `bucket` (the stack's export location).
    """

    def __init__(self, dynamodb: DynamoDBClient, s3: S3Client, bucket: str, prefix: str) -> None:
        self._dynamodb, self._s3 = dynamodb, s3
        self._bucket, self._prefix = bucket, prefix.rstrip("/") + "/"

    # --- the three calls --------------------------------------------------------------------------
    def backups(self, params: dict[str, Any]) -> dict[str, Any]:
        now = clock().replace(microsecond=0)
        recovery = {
            "PointInTimeRecoveryStatus": "ENABLED",
            "EarliestRestorableDateTime": now - timedelta(days=PITR_DAYS),
            "LatestRestorableDateTime": now,
        }
        return {
            "ContinuousBackupsDescription": {
                "ContinuousBackupsStatus": "ENABLED",
                "PointInTimeRecoveryDescription": recovery,
            }
        }

    def export(self, params: dict[str, Any]) -> dict[str, Any]:
        table_arn, bucket = params["TableArn"], params["S3Bucket"]
        prefix = params.get("S3Prefix", "").rstrip("/") + "/"
        incremental = params.get("ExportType") == "INCREMENTAL_EXPORT"
        window = params.get("IncrementalExportSpecification", {})
        end = window["ExportToTime"] if incremental else params["ExportTime"]
        start = window["ExportFromTime"] if incremental else None
        if end > clock():
            raise _refused(f"export time {end.isoformat()} is after the latest restorable time")
        items = self._scan(table_arn.rsplit("/", 1)[-1])
        lines = self._changes(start, end, items) if start else [export_line(i) for i in items]
        chunks = ["".join(lines[n : n + ITEMS_PER_FILE]).encode() for n in range(0, max(len(lines), 1), ITEMS_PER_FILE)]
        directory, objects = export_objects(table_arn, end, chunks, start, bucket, prefix)
        for key, body in objects.items():
            self._s3.put_object(Bucket=bucket, Key=key, Body=body)
        self._keep(end, items)
        description = {
            "ExportArn": f"{table_arn}/export/{directory.rstrip('/').rsplit('/', 1)[-1]}",
            "ExportStatus": "COMPLETED",
            "TableArn": table_arn,
            "S3Bucket": bucket,
            "S3Prefix": prefix.rstrip("/"),
            "ExportManifest": directory + EXPORT_SUMMARY,
            "ExportType": params.get("ExportType", "FULL_EXPORT"),
            "ItemCount": len(lines),
            **({"IncrementalExportSpecification": window} if incremental else {"ExportTime": end}),
        }
        self._s3.put_object(
            Bucket=self._bucket, Key=self._described(description["ExportArn"]), Body=_dumps(description)
        )
        return {"ExportDescription": description}

    def describe(self, params: dict[str, Any]) -> dict[str, Any]:
        arn = params["ExportArn"]
        try:
            body = self._s3.get_object(Bucket=self._bucket, Key=self._described(arn))["Body"].read()
        except ClientError as exc:
            raise ClientError({"Error": {"Code": "ExportNotFoundException", "Message": arn}}, "DescribeExport") from exc
        return {"ExportDescription": json.loads(body, object_hook=_times)}

    # --- what it keeps (under its own prefix of the export location) --------------------------------
    def _described(self, arn: str) -> str:
        return f"{self._prefix}{STANDIN_PREFIX}exports/{arn.rsplit('/', 1)[-1]}.json"

    def _snapshot(self, moment: datetime) -> str:
        return f"{self._prefix}{STANDIN_PREFIX}scans/{moment.astimezone(UTC):%Y-%m-%dT%H-%M-%S-%f}.json.gz"

    def _scan(self, table: str) -> list[dict[str, Any]]:
        pages = self._dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True)
        return [item for page in pages for item in page.get("Items", [])]

    def _keep(self, moment: datetime, items: list[dict[str, Any]]) -> None:
        body = gzip.compress("".join(json.dumps(i, sort_keys=True) + "\n" for i in items).encode(), mtime=0)
        self._s3.put_object(Bucket=self._bucket, Key=self._snapshot(moment), Body=body)

    def _changes(self, start: datetime, end: datetime, items: list[dict[str, Any]]) -> list[str]:
        """The window's lines: the net change of every item between the Scan at `start` and now."""
        try:
            body = self._s3.get_object(Bucket=self._bucket, Key=self._snapshot(start))["Body"].read()
        except ClientError as exc:
            raise _refused(
                f"the stand-in has no Scan of the table at {start.isoformat()}: it exports a window only "
                "from the time of an export it made"
            ) from exc
        before = {_key(i): i for i in map(json.loads, gzip.decompress(body).decode().splitlines())}
        after = {_key(i): i for i in items}
        lines = [change_line({a: i[a] for a in _KEY}, i, end) for k, i in after.items() if before.get(k) != i]
        lines += [change_line({a: i[a] for a in _KEY}, None, end) for k, i in before.items() if k not in after]
        return lines


def _dumps(description: dict[str, Any]) -> bytes:
    return json.dumps(description, default=lambda t: {"$time": t.isoformat()}).encode()


def _times(value: dict[str, Any]) -> Any:
    return datetime.fromisoformat(value["$time"]) if set(value) == {"$time"} else value


_Answer = Callable[[ExportStandIn, dict[str, Any]], dict[str, Any]]
_ANSWERS: dict[str, _Answer] = {
    "ExportTableToPointInTime": ExportStandIn.export,
    "DescribeExport": ExportStandIn.describe,
    "DescribeContinuousBackups": ExportStandIn.backups,
}
