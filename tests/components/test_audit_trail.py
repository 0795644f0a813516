"""AuditTrail under the mocks (both stacks build it), and its pure parts: the change log's path
(table stream → Pipe → Firehose with Parquet conversion → Object Lock bucket), the access trail
(CloudTrail data events of raw/ and processed/ only), their tables, workgroup and policies.
"""

from __future__ import annotations

import json

from components import audit_policies, catalog
from components.audit_trail import BUFFER_MIB, PIPE_BATCH, delivery_role_name
from jobs.contract import layout
from jobs.contract.audit import glue_columns
from tests.components.program import ACCOUNT, REGION, ProgramRun, as_list

STAGE = "dev"
AUDIT_LOG = layout.bucket_name(STAGE, layout.AUDIT_LOG)
ACCESS = layout.bucket_name(STAGE, layout.ACCESS_TRAIL)
DELIVERY_ROLE = f"arn:aws:iam::{ACCOUNT}:role/{delivery_role_name(STAGE)}"
TRAIL = f"arn:aws:cloudtrail:{REGION}:{ACCOUNT}:trail/{layout.access_trail_name(STAGE)}"


def _key_arn(run: ProgramRun) -> str:
    return run.one("aws:dynamodb/table:Table").inputs["serverSideEncryption"]["kmsKeyArn"]


def _policy(run: ProgramRun, name: str) -> dict:
    return json.loads(run.named(name).inputs["policy"])


def _statements(doc: dict) -> dict[str, dict]:
    return {s["Sid"]: s for s in doc["Statement"]}


def test_the_changes_table_is_the_contracts_record_partitioned_by_delivery_day(dev: ProgramRun) -> None:
    database = dev.named("docuflow-dev-audit-trail-database").inputs
    assert database["name"] == layout.trail_database_name(STAGE) == "docuflow_dev_trail"
    table = dev.named("docuflow-dev-audit-trail-changes").inputs
    assert table["name"] == layout.GLUE_CHANGES_TABLE and table["databaseName"] == database["name"]
    storage = table["storageDescriptor"]
    assert [(c["name"], c["type"]) for c in storage["columns"]] == list(glue_columns())
    assert storage["location"] == f"s3://{AUDIT_LOG}/{layout.AUDIT_CHANGES_PREFIX}"
    assert storage["serDeInfo"]["serializationLibrary"] == catalog.PARQUET_SERDE
    assert table["partitionKeys"] == [{"name": "dt", "type": "string"}]
    parameters = table["parameters"]
    assert (parameters["projection.dt.type"], parameters["projection.dt.format"]) == ("date", "yyyy-MM-dd")
    assert parameters["storage.location.template"] == f"s3://{AUDIT_LOG}/changes/dt=${{dt}}/"


def test_firehose_converts_to_parquet_against_that_table_into_the_audit_log(dev: ProgramRun) -> None:
    stream = dev.one("aws:kinesis/firehoseDeliveryStream:FirehoseDeliveryStream").inputs
    assert stream["name"] == layout.audit_delivery_name(STAGE) and stream["destination"] == "extended_s3"
    assert stream["serverSideEncryption"] == {
        "enabled": True,
        "keyType": "CUSTOMER_MANAGED_CMK",
        "keyArn": _key_arn(dev),
    }
    s3 = stream["extendedS3Configuration"]
    assert s3["bucketArn"] == f"arn:aws:s3:::{AUDIT_LOG}" and s3["kmsKeyArn"] == _key_arn(dev)
    assert s3["prefix"] == "changes/dt=!{timestamp:yyyy-MM-dd}/" and s3["customTimeZone"] == "UTC"
    assert s3["errorOutputPrefix"] == "errors/!{firehose:error-output-type}/dt=!{timestamp:yyyy-MM-dd}/"
    assert s3["bufferingSize"] == BUFFER_MIB >= 64 and s3["fileExtension"] == ".parquet"
    conversion = s3["dataFormatConversionConfiguration"]
    assert conversion["enabled"] is True
    assert conversion["inputFormatConfiguration"]["deserializer"] == {"openXJsonSerDe": {"caseInsensitive": True}}
    assert conversion["outputFormatConfiguration"]["serializer"] == {"parquetSerDe": {"compression": "SNAPPY"}}
    schema = conversion["schemaConfiguration"]
    assert (schema["databaseName"], schema["tableName"], schema["versionId"]) == (
        layout.trail_database_name(STAGE),
        layout.GLUE_CHANGES_TABLE,
        "LATEST",
    )
    assert schema["roleArn"] == s3["roleArn"] == DELIVERY_ROLE


def test_the_pipe_forwards_every_stream_record_unchanged_to_firehose(dev: ProgramRun) -> None:
    pipe = dev.named("docuflow-dev-audit-trail-pipe").inputs
    table = dev.one("aws:dynamodb/table:Table")
    assert (
        pipe["source"]
        == f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{table.inputs['name']}/stream/2026-11-29T00:00:00.000"
    )
    assert pipe["target"].endswith(f"deliverystream/{layout.audit_delivery_name(STAGE)}")
    source = pipe["sourceParameters"]
    assert "filterCriteria" not in source and "targetParameters" not in pipe  # no filter, no input template
    stream = source["dynamodbStreamParameters"]
    assert stream["startingPosition"] == "TRIM_HORIZON" and stream["batchSize"] == PIPE_BATCH == 500
    assert stream["parallelizationFactor"] == 1 and stream["onPartialBatchItemFailure"] == "AUTOMATIC_BISECT"
    assert stream["deadLetterConfig"]["arn"].endswith("audit-trail-pipe-dlq-1a2b3c")


def test_the_two_service_roles_hold_only_their_hop(dev: ProgramRun) -> None:
    pipe = _statements(_policy(dev, "docuflow-dev-audit-trail-pipe-policy"))
    assert pipe["DeliverChanges"]["Action"] == ["firehose:PutRecord", "firehose:PutRecordBatch"]
    assert as_list(pipe["DeliverChanges"]["Resource"])[0].endswith(
        f"deliverystream/{layout.audit_delivery_name(STAGE)}"
    )
    assert pipe["ReadTableStream"]["Resource"][0].endswith("/stream/2026-11-29T00:00:00.000")
    delivery = _statements(_policy(dev, "docuflow-dev-audit-trail-delivery-policy"))
    assert delivery["DeliverLogObjects"]["Resource"] == [
        f"arn:aws:s3:::{AUDIT_LOG}/{layout.AUDIT_CHANGES_PREFIX}*",
        f"arn:aws:s3:::{AUDIT_LOG}/{layout.AUDIT_ERRORS_PREFIX}*",
    ]
    assert delivery["ReadChangesTable"]["Resource"][-1] == (
        f"arn:aws:glue:{REGION}:{ACCOUNT}:table/{layout.trail_database_name(STAGE)}/{layout.GLUE_CHANGES_TABLE}"
    )
    assert dev.named("docuflow-dev-audit-trail-delivery-role").inputs["name"] == delivery_role_name(STAGE)


def test_only_the_delivery_stream_writes_the_audit_log_and_nobody_deletes_it(dev: ProgramRun, prod: ProgramRun) -> None:
    denies = _statements(_policy(dev, "docuflow-dev-audit-log-policy"))
    assert denies["DenyWritesButTheLogsDelivery"]["Condition"] == {"ArnNotEquals": {"aws:PrincipalArn": DELIVERY_ROLE}}
    tamper = denies["DenyLogTampering"]
    assert {"s3:DeleteObject", "s3:DeleteObjectVersion", "s3:BypassGovernanceRetention"} <= set(tamper["Action"])
    assert "Condition" not in tamper  # dev has no break-glass role: nobody at all
    prod_denies = _statements(_policy(prod, "docuflow-prod-audit-log-policy"))
    exempt = prod_denies["DenyWritesButTheLogsDelivery"]["Condition"]["ArnNotEquals"]["aws:PrincipalArn"]
    assert len(exempt) == 2 and exempt[0].endswith(delivery_role_name("prod"))


def test_cloudtrail_records_data_events_of_raw_and_processed_objects_only(dev: ProgramRun) -> None:
    trail = dev.one("aws:cloudtrail/trail:Trail").inputs
    assert trail["name"] == layout.access_trail_name(STAGE) and trail["s3BucketName"] == ACCESS
    assert trail["enableLogFileValidation"] is True and trail["kmsKeyId"] == _key_arn(dev)
    (selector,) = trail["advancedEventSelectors"]
    fields = {f["field"]: f for f in selector["fieldSelectors"]}
    assert fields["eventCategory"]["equals"] == ["Data"] and fields["resources.type"]["equals"] == ["AWS::S3::Object"]
    assert fields["resources.ARN"]["startsWiths"] == [
        f"arn:aws:s3:::{layout.bucket_name(STAGE, 'raw')}/{layout.RAW_PREFIX}",
        f"arn:aws:s3:::{layout.bucket_name(STAGE, 'processed')}/{layout.PROCESSED_PREFIX}",
    ]
    bucket = _statements(_policy(dev, "docuflow-dev-access-trail-policy"))
    assert bucket["CloudTrailDelivers"]["Resource"] == [f"arn:aws:s3:::{ACCESS}/AWSLogs/{ACCOUNT}/*"]
    assert bucket["CloudTrailDelivers"]["Condition"]["StringEquals"]["aws:SourceArn"] == TRAIL
    assert bucket["DenyWritesButCloudTrail"]["Condition"] == {
        "StringNotEquals": {"aws:PrincipalServiceName": "cloudtrail.amazonaws.com"}
    }
    key = _statements(json.loads(dev.named("docuflow-dev-key").inputs["policy"]))
    assert key["CloudTrailEncryptsAccessLogs"]["Condition"]["StringEquals"] == {"aws:SourceArn": TRAIL}
    access = dev.named("docuflow-dev-audit-trail-access").inputs
    assert access["storageDescriptor"]["location"] == f"s3://{ACCESS}/AWSLogs/{ACCOUNT}/CloudTrail/{REGION}/"
    assert access["parameters"]["projection.timestamp.format"] == "yyyy/MM/dd"


def test_auditors_query_in_their_workgroup_with_a_read_only_policy(dev: ProgramRun) -> None:
    workgroup = dev.named("docuflow-dev-audit-trail-workgroup").inputs
    assert workgroup["name"] == layout.audit_workgroup_name(STAGE)
    results = workgroup["configuration"]["resultConfiguration"]
    assert results["outputLocation"] == f"s3://{layout.bucket_name(STAGE, 'reports')}/athena/audit/"
    reader = dev.one("aws:iam/policy:Policy").inputs
    actions = {a for s in json.loads(reader["policy"])["Statement"] for a in as_list(s["Action"])}
    assert "athena:StartQueryExecution" in actions and "s3:GetObject" in actions
    writes = {a for a in actions if a.startswith("s3:") and ("Put" in a or "Delete" in a)}
    assert writes == {"s3:PutObject"}  # Athena's own query results, under athena/audit/ only
    (put,) = [s for s in json.loads(reader["policy"])["Statement"] if "s3:PutObject" in as_list(s["Action"])]
    assert put["Resource"] == [f"arn:aws:s3:::{layout.bucket_name(STAGE, 'reports')}/athena/audit/*"]


def test_policies_deny_everyone_but_the_break_glass_role_when_one_is_named() -> None:
    glass = "arn:aws:iam::111122223333:role/glass"
    doc = audit_policies.audit_log_bucket_policy("arn:aws:s3:::b", "arn:aws:iam::1:role/w", glass)
    tamper = _statements(doc)["DenyLogTampering"]
    assert tamper["Condition"] == {"ArnNotEquals": {"aws:PrincipalArn": glass}}


def test_the_polars_nightly_checks_the_change_log_and_may_read_it(dev: ProgramRun, prod: ProgramRun) -> None:
    for job in ("reconcile", "repair"):
        (td,) = [t for t in prod.of_type("aws:ecs/taskDefinition:TaskDefinition") if t.inputs["family"].endswith(job)]
        (container,) = json.loads(td.inputs["containerDefinitions"])
        assert container["command"][-3:] == ["--audit-log", "--audit-window", "3d"]
        statements = _statements(_policy(prod, f"docuflow-prod-{job}-task-policy"))
        assert statements["ReadAuditLog"]["Resource"] == [
            f"arn:aws:s3:::{layout.bucket_name('prod', layout.AUDIT_LOG)}/{p}"
            for p in (f"{layout.AUDIT_CHANGES_PREFIX}*", f"{layout.AUDIT_ERRORS_PREFIX}*")
        ]
        # dev reconciles on Athena, which does not run the rule: no reading of the log either.
        assert "ReadAuditLog" not in _statements(_policy(dev, f"docuflow-dev-{job}-task-policy"))
