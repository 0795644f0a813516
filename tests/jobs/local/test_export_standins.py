"""The local stack's stand-ins for what only AWS does: table exports and S3 Inventory reports.

They are named as stand-ins and refuse anything but the local stack; the export stand-in answers
only what a Scan can honestly answer (a window must start at a time it scanned).
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from jobs.contract import layout
from jobs.errors import SettingsError, StoreRequestError
from jobs.local.standins import exports as export_standin
from jobs.local.standins import inventory as inventory_standin
from jobs.observability import CallMetrics
from jobs.reconcile.inputs.export import export_manifest
from jobs.settings import JobSettings
from jobs.store.clients import botocore_config, dynamodb_client, s3_client
from jobs.store.s3 import Buckets
from jobs.store.table_export import TableExports


def _exports(settings: JobSettings) -> TableExports:
    client = dynamodb_client(settings)
    export_standin.attach(client, settings.reconcile.export_bucket, settings.reconcile.export_prefix)
    return TableExports(client, CallMetrics())


def test_the_export_stand_in_refuses_what_a_scan_cannot_answer(stack: Any) -> None:
    settings = JobSettings.from_env()
    exports = _exports(settings)
    now = exports.latest_restorable(settings.store.table_arn)
    with pytest.raises(StoreRequestError, match="no Scan of the table"):
        exports.start_incremental(
            settings.store.table_arn, now - timedelta(hours=1), now, settings.reconcile.export_bucket, "exports/"
        )
    with pytest.raises(StoreRequestError, match="after the latest restorable time"):
        exports.start(settings.store.table_arn, now + timedelta(hours=1), settings.reconcile.export_bucket, "exports/")
    remote = boto3.client("dynamodb", endpoint_url="https://dynamodb.eu-west-1.amazonaws.com", region_name="eu-west-1")
    with pytest.raises(SettingsError, match="not loopback"):
        export_standin.attach(remote, settings.reconcile.export_bucket, "exports/")


def test_the_stand_ins_write_what_aws_writes(stack: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full export, then the window after it: DynamoDB's layout, read by the job's readers."""
    settings = JobSettings.from_env()
    clock = [layout.utc_now()]
    monkeypatch.setattr(export_standin, "clock", lambda: clock[0])
    s3 = stack.s3()
    item = {layout.PK_ATTR: {"S": layout.user_pk("u1")}, layout.SK_ATTR: {"S": layout.document_sk("d1")}}
    stack.dynamodb().put_item(TableName=settings.store.table_name, Item=item)
    exports = _exports(settings)
    t0 = exports.latest_restorable(settings.store.table_arn)
    full = exports.wait(
        exports.start(settings.store.table_arn, t0, settings.reconcile.export_bucket, settings.reconcile.export_prefix)
    )
    stack.dynamodb().delete_item(TableName=settings.store.table_name, Key=item)
    t1 = t0 + timedelta(minutes=20)
    clock[0] = t1
    arn = exports.start_incremental(
        settings.store.table_arn, t0, t1, settings.reconcile.export_bucket, settings.reconcile.export_prefix
    )
    changes = exports.wait(arn)
    buckets = Buckets(s3_client(settings), CallMetrics())
    assert export_manifest(full.directory, buckets).item_count == 1
    window = export_manifest(changes.directory, buckets)
    assert (window.incremental, window.from_time, window.export_time, window.item_count) == (True, t0, t1, 1)
    delivered = inventory_standin.deliver(settings, t1)
    assert len(delivered) == 2
    manifest = json.loads(s3.get_object(Bucket=settings.reconcile.inventory_bucket, Key=delivered[0])["Body"].read())
    assert manifest["fileFormat"] == "Parquet" and manifest["sourceBucket"] == settings.store.raw_bucket


def test_botocore_attaches_the_export_stand_in_as_a_client_plugin(stack: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stack's environment names the plugin: a fresh DynamoDB client answers an export with no
    job code attaching anything; an S3 client is left alone; without the variable DynamoDB Local refuses.
    """
    settings = JobSettings.from_env()
    assert os.environ[export_standin.PLUGIN_ENV] == export_standin.PLUGIN
    export = {
        "TableArn": settings.store.table_arn,
        "ExportTime": layout.utc_now() - timedelta(seconds=1),
        "S3Bucket": settings.reconcile.export_bucket,
        "S3Prefix": settings.reconcile.export_prefix,
    }
    plugged = boto3.client("dynamodb", config=botocore_config(settings))
    described = plugged.export_table_to_point_in_time(**export)["ExportDescription"]
    assert described["ExportStatus"] == "COMPLETED"
    assert plugged.describe_export(ExportArn=described["ExportArn"])["ExportDescription"]["ItemCount"] == 0

    def no_settings() -> JobSettings:
        raise AssertionError("the plugin read the settings for an S3 client")

    with monkeypatch.context() as patch:
        patch.setattr(export_standin.JobSettings, "from_env", no_settings)
        boto3.client("s3", config=botocore_config(settings)).list_buckets()

    monkeypatch.delenv(export_standin.PLUGIN_ENV)
    bare = boto3.client("dynamodb", config=botocore_config(settings))
    with pytest.raises(ClientError) as refused:
        bare.export_table_to_point_in_time(**export)
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] >= 400
