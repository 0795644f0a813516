"""AuditCatalog under the mocks (dev turns the Athena engine on, prod does not), and its pure parts."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from components import catalog
from components.settings import StackSettings
from jobs.contract import DocumentItem, layout
from jobs.contract.audit import dynamodb_json, hive
from jobs.reconcile.policy import reconcile_task_policy
from jobs.reconcile.rules import sql_rules as sql
from tests.components.program import ACCOUNT, ProgramRun, as_list, catalog_grants, stack_config, task_policy

AUDIT = layout.bucket_name("dev", layout.AUDIT_DATA)
SOURCES = {p: layout.bucket_name("dev", p) for p in ("raw", "processed")}


def _settings(run: ProgramRun) -> StackSettings:
    return StackSettings.from_mapping(stack_config(run.stack))


def _key_arn(run: ProgramRun) -> str:
    return run.one("aws:dynamodb/table:Table").inputs["serverSideEncryption"]["kmsKeyArn"]


def test_daily_parquet_inventories_of_the_data_buckets_into_the_audit_bucket(dev: ProgramRun) -> None:
    inventories = {r.inputs["bucket"]: r.inputs for r in dev.of_type("aws:s3/inventory:Inventory")}
    assert set(inventories) == set(SOURCES.values())
    for inventory in inventories.values():
        assert inventory["name"] == layout.INVENTORY_CONFIGURATION_ID and inventory["enabled"] is True
        assert inventory["includedObjectVersions"] == "Current"
        assert inventory["schedule"] == {"frequency": "Daily"}
        # key, size, last-modified, ETag, storage class, multipart flag (bucket and key always).
        assert inventory["optionalFields"] == [
            "Size",
            "LastModifiedDate",
            "ETag",
            "StorageClass",
            "IsMultipartUploaded",
        ]
        destination = inventory["destination"]["bucket"]
        assert destination["bucketArn"] == f"arn:aws:s3:::{AUDIT}" and destination["format"] == "Parquet"
        assert destination["prefix"] + "/" == layout.INVENTORY_PREFIX and destination["accountId"] == ACCOUNT
        assert destination["encryption"] == {"sseKms": {"keyId": _key_arn(dev)}}


def test_only_s3_inventory_of_our_buckets_delivers_into_the_audit_bucket(dev: ProgramRun) -> None:
    (policy,) = [r for r in dev.of_type("aws:s3/bucketPolicy:BucketPolicy") if r.inputs["bucket"] == AUDIT]
    (allow,) = [s for s in json.loads(policy.inputs["policy"])["Statement"] if s["Effect"] == "Allow"]
    assert allow["Principal"] == {"Service": "s3.amazonaws.com"} and allow["Action"] == ["s3:PutObject"]
    assert allow["Resource"] == [f"arn:aws:s3:::{AUDIT}/{layout.INVENTORY_PREFIX}*"]
    assert allow["Condition"] == {
        "ArnLike": {"aws:SourceArn": [f"arn:aws:s3:::{b}" for b in SOURCES.values()]},
        "StringEquals": {"aws:SourceAccount": ACCOUNT},
    }
    key = json.loads(dev.named("docuflow-dev-key").inputs["policy"])
    (encrypt,) = [s for s in key["Statement"] if s["Sid"] == "S3EncryptsInventoryReports"]
    assert encrypt["Action"] == ["kms:GenerateDataKey"] and encrypt["Condition"] == allow["Condition"]
    # Inventories and exports are regenerated every day and the nightly table states read the next
    # night: each prefix expires; the Iceberg table's files are Iceberg's to remove, never lifecycle's.
    (lifecycle,) = [
        r
        for r in dev.of_type("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")
        if r.inputs["bucket"] == AUDIT
    ]
    settings = _settings(dev)
    expiries = {
        r["filter"].get("prefix", ""): r["expiration"]["days"] for r in lifecycle.inputs["rules"] if "expiration" in r
    }
    assert expiries == {
        layout.INVENTORY_PREFIX: settings.reconcile.audit_data_retention_days,
        layout.DYNAMODB_EXPORTS_PREFIX: settings.reconcile.audit_data_retention_days,
        layout.TABLE_STATE_PREFIX: settings.reconcile.table_state_retention_days,
    }
    assert not any(layout.ICEBERG_PREFIX.startswith(prefix) for prefix in expiries)


def test_glue_tables_over_the_inventories_and_the_exports(dev: ProgramRun) -> None:
    database = dev.named("docuflow-dev-audit-database").inputs
    assert database["name"] == layout.glue_database_name("dev") == "docuflow_dev_audit"
    tables = {
        t.inputs["name"]: t.inputs
        for t in dev.of_type("aws:glue/catalogTable:CatalogTable")
        if t.inputs["databaseName"] == database["name"]
    }
    assert set(tables) == {
        *layout.GLUE_INVENTORY_TABLES.values(),
        layout.GLUE_EXPORT_TABLE,
        layout.GLUE_INCREMENTAL_TABLE,
        layout.GLUE_STATE_TABLE,
    }
    for purpose, name in layout.GLUE_INVENTORY_TABLES.items():
        table = tables[name]
        hive = f"s3://{AUDIT}/{layout.inventory_prefix(SOURCES[purpose])}hive/"
        assert table["databaseName"] == database["name"] and table["tableType"] == "EXTERNAL_TABLE"
        assert table["partitionKeys"] == [{"name": "dt", "type": "string"}]
        assert table["parameters"]["projection.dt.type"] == "date"
        assert table["parameters"]["storage.location.template"] == hive + "dt=${dt}"
        storage = table["storageDescriptor"]
        assert storage["location"] == hive and storage["inputFormat"] == catalog.SYMLINK_INPUT
        assert storage["serDeInfo"]["serializationLibrary"] == catalog.PARQUET_SERDE
        assert [c["name"] for c in storage["columns"]] == [f.column for f in catalog.INVENTORY_FIELDS]
    export = tables[layout.GLUE_EXPORT_TABLE]
    assert export["parameters"]["projection.export_id.type"] == "injected"
    assert export["parameters"]["storage.location.template"].endswith("AWSDynamoDB/${export_id}/data/")
    assert export["storageDescriptor"]["columns"] == [{"name": "item", "type": catalog.export_item_type()}]
    # The incremental exports: the same partitions, the keys and the new image of each changed item.
    changes = tables[layout.GLUE_INCREMENTAL_TABLE]
    assert changes["parameters"] == export["parameters"]
    assert [c["name"] for c in changes["storageDescriptor"]["columns"]] == ["keys", "newimage"]
    assert changes["storageDescriptor"]["columns"][1]["type"] == catalog.export_item_type()
    # The Iceberg table the nightly run merges into: the export's item struct unchanged.
    state = tables[layout.GLUE_STATE_TABLE]
    assert state["openTableFormatInput"] == {"icebergInput": {"metadataOperation": "CREATE", "version": "2"}}
    assert state["storageDescriptor"]["location"] == f"s3://{AUDIT}/{layout.iceberg_location(layout.GLUE_STATE_TABLE)}"
    columns = {c["name"]: c["type"] for c in state["storageDescriptor"]["columns"]}
    assert columns == {
        "pk": "string",
        "sk": "string",
        "item": catalog.export_item_type(),
        "as_of": "timestamp",
        "anchored_at": "timestamp",
    }


def test_athena_workgroup_enforces_encrypted_results_and_a_scan_cutoff(dev: ProgramRun) -> None:
    workgroup = dev.named("docuflow-dev-audit-workgroup").inputs
    assert workgroup["name"] == layout.athena_workgroup_name("dev")
    config = workgroup["configuration"]
    assert config["enforceWorkgroupConfiguration"] is True
    assert config["bytesScannedCutoffPerQuery"] == _settings(dev).reconcile.athena_bytes_scanned_cutoff
    results = config["resultConfiguration"]
    assert results["outputLocation"] == f"s3://{layout.bucket_name('dev', 'reports')}/{layout.ATHENA_RESULTS_PREFIX}"
    assert results["encryptionConfiguration"] == {"encryptionOption": "SSE_KMS", "kmsKeyArn": _key_arn(dev)}
    # Results land outside the write-once report prefixes, so Athena's plain puts are allowed.
    assert not layout.ATHENA_RESULTS_PREFIX.startswith(layout.WRITE_ONCE_REPORT_PREFIXES)


def _role_policy(run: ProgramRun, job: str) -> dict:
    (rec,) = [
        r for r in run.of_type("aws:iam/rolePolicy:RolePolicy") if r.name == f"docuflow-{run.stack}-{job}-task-policy"
    ]
    return json.loads(rec.inputs["policy"])


@pytest.mark.parametrize("job", ["reconcile", "repair"])
def test_reconcile_roles_get_the_catalog_grants_only_with_athena(dev: ProgramRun, prod: ProgramRun, job: str) -> None:
    reports = f"arn:aws:s3:::{layout.bucket_name('dev', 'reports')}"
    catalog_statements = task_policy(
        reconcile_task_policy,
        table_arn="t",
        raw_bucket_arn="r",
        processed_bucket_arn="p",
        reports_bucket_arn=reports,
        key_arn="k",
        audit_bucket_arn=catalog_grants("dev")["audit_bucket_arn"],
        catalog=catalog_grants("dev"),
    )["Statement"]
    without = task_policy(
        reconcile_task_policy,
        table_arn="t",
        raw_bucket_arn="r",
        processed_bucket_arn="p",
        reports_bucket_arn=reports,
        key_arn="k",
        audit_bucket_arn=catalog_grants("dev")["audit_bucket_arn"],
    )["Statement"]
    sids = {s["Sid"] for s in catalog_statements} - {s["Sid"] for s in without}
    assert sids >= {"QueryInWorkgroup", "ReadCatalog", "CommitStateTable", "StateTableFiles"}
    expected = [s for s in catalog_statements if s["Sid"] in sids]
    assert [s for s in _role_policy(dev, job)["Statement"] if s["Sid"] in sids] == expected
    # prod reconciles with polars: the nightly chain's grants, no catalog, nothing of it in the roles.
    prod_statements = _role_policy(prod, job)["Statement"]
    assert not sids & {s["Sid"] for s in prod_statements}
    assert {"ExportTable", "ReadRestoreWindow", "KeepTableStates"} <= {s["Sid"] for s in prod_statements}
    assert not any(a.startswith(("athena:", "glue:")) for s in prod_statements for a in as_list(s["Action"]))
    # The audit trail's workgroup and tables are there whatever the engine; the reconcile's not.
    workgroups = [w.inputs["name"] for w in prod.of_type("aws:athena/workgroup:Workgroup")]
    assert workgroups == [layout.audit_workgroup_name("prod")]
    assert not any(
        t.inputs["databaseName"] == layout.glue_database_name("prod")
        for t in prod.of_type("aws:glue/catalogTable:CatalogTable")
    )
    # Both engines judge the daily inventories.
    assert len(prod.of_type("aws:s3/inventory:Inventory")) == 2


def test_export_item_type_is_derived_from_the_contract() -> None:
    item = catalog.export_item_type()
    for name in DocumentItem.model_fields:
        assert f"{name.lower()}:struct<" in item, name
    assert "totalamount:struct<n:string>" in item and "reviewreasons:struct<l:array<struct<s:string>>>" in item
    assert "createdat:struct<s:string>" in item  # times are ISO strings on the item
    # Every attribute the rules read, so the Iceberg table the nightly MERGE keeps holds it
    # (the duplicate markers a document holds among them; a marker row's own are its keys).
    for attribute, tag in sql.export_columns(deep=True).items():
        assert f"{attribute.lower()}:struct<{tag.lower()}:string>" in item, attribute
    assert "contentmarker:struct<s:string>" in item and "invoicemarker:struct<s:string>" in item


def test_an_attribute_type_the_catalog_cannot_render_fails_loudly() -> None:
    with pytest.raises(TypeError, match="no DynamoDB JSON type"):
        dynamodb_json(dict[str, int])
    assert hive(dynamodb_json(datetime | None)) == "struct<s:string>"
