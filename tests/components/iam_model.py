"""What IAM authorizes for each recorded AWS call, and a small evaluator of our policy documents.

`permissions(call, arns)` maps one call recorded by jobs.store.call_recording to the IAM
permissions it needs: `(action, resource ARN, request context)`. The table is the one place that
knows, as AWS documents it, that a TransactWriteItems `Put` is authorized as dynamodb:PutItem, a
HeadObject as s3:GetObject, a PutObject with `Tagging` as s3:PutObjectTagging too, and that
Textract reads the S3 object it is given with the caller's own permissions. An operation missing
from the table fails the test that meets it, so a new call can never slip past IAM unreviewed.

`allowed`/`denied` evaluate Allow and Deny statements for one permission: exact actions, `*`/`?`
resource patterns, and the condition operators our policies use (any other operator raises).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import urlparse

from jobs.store.call_recording import Call
from tests.components.program import as_list


@dataclass(frozen=True)
class Arns:
    """Where ARNs that a call names only by name live (DynamoDB tables, SQS queues, Athena)."""

    region: str
    account: str

    def table(self, name: str) -> str:
        return f"arn:aws:dynamodb:{self.region}:{self.account}:table/{name}"

    def queue(self, url: str) -> str:
        return f"arn:aws:sqs:{self.region}:{self.account}:{urlparse(url).path.rsplit('/', 1)[-1]}"

    def workgroup(self, name: str) -> str:
        return f"arn:aws:athena:{self.region}:{self.account}:workgroup/{name}"

    def dynamodb(self, name_or_arn: str) -> str:
        """A table (or its export) as its ARN reads in this account and region: DynamoDB Local's
        ARNs name its own, and a table may be called by name.
        """
        if not name_or_arn.startswith("arn:"):
            return self.table(name_or_arn)
        return f"arn:aws:dynamodb:{self.region}:{self.account}:{name_or_arn.split(':', 5)[5]}"


@dataclass(frozen=True)
class Permission:
    action: str
    resource: str
    context: tuple[tuple[str, str], ...] = field(default=())

    def value(self, key: str) -> str | None:
        return dict(self.context).get(key)


def _object(bucket: str, key: str) -> str:
    return f"arn:aws:s3:::{bucket}/{key}"


def _s3_read(p: Mapping[str, Any], _: Arns, outcome: Mapping[str, Any]) -> list[Permission]:
    # GetObject and HeadObject are both s3:GetObject; a specific version needs GetObjectVersion.
    action = "s3:GetObjectVersion" if p.get("VersionId") else "s3:GetObject"
    needed = [Permission(action, _object(p["Bucket"], p["Key"]))]
    if outcome.get("status") == 404:
        # S3 answers 404 for a missing key only to a caller that may list the bucket, 403
        # AccessDenied otherwise (GetObject/HeadObject API reference): the job could not tell a
        # deleted object from a refused read. That ListBucket request carries no s3:prefix.
        needed.append(Permission("s3:ListBucket", f"arn:aws:s3:::{p['Bucket']}"))
    return needed


def _s3_put(p: Mapping[str, Any], _: Arns) -> list[Permission]:
    resource = _object(p["Bucket"], p["Key"])
    # The request context S3 builds: the conditional-write header (bucket policies test it) and
    # that this request creates an object (as opposed to a part of a multipart upload).
    context = [("s3:ObjectCreationOperation", "true")]
    if p.get("IfNoneMatch") is not None:
        context.append(("s3:if-none-match", str(p["IfNoneMatch"])))
    if p.get("IfMatch") is not None:
        context.append(("s3:if-match", str(p["IfMatch"])))
    needed = [Permission("s3:PutObject", resource, tuple(context))]
    if p.get("Tagging"):
        needed.append(Permission("s3:PutObjectTagging", resource))
    if p.get("ObjectLockMode") or p.get("ObjectLockRetainUntilDate"):
        needed.append(Permission("s3:PutObjectRetention", resource))
    if p.get("ObjectLockLegalHoldStatus"):
        needed.append(Permission("s3:PutObjectLegalHold", resource))
    return needed


def _s3_list(action: str) -> Callable[[Mapping[str, Any], Arns], list[Permission]]:
    # ListObjectsV2 is s3:ListBucket, ListObjectVersions s3:ListBucketVersions (both bucket-level).
    def needed(p: Mapping[str, Any], _: Arns) -> list[Permission]:
        context = (("s3:prefix", p["Prefix"]),) if "Prefix" in p else ()
        return [Permission(action, f"arn:aws:s3:::{p['Bucket']}", context)]

    return needed


def _s3_delete_objects(p: Mapping[str, Any], _: Arns) -> list[Permission]:
    # DeleteObjects is authorized object by object: s3:DeleteObject, or s3:DeleteObjectVersion
    # for an entry naming a version (S3 API reference, DeleteObjects "Permissions").
    return [
        Permission(
            "s3:DeleteObjectVersion" if entry.get("VersionId") else "s3:DeleteObject",
            _object(p["Bucket"], entry["Key"]),
        )
        for entry in p["Delete"]["Objects"]
    ]


def _s3_object(action: str) -> Callable[[Mapping[str, Any], Arns], list[Permission]]:
    # Tagging and legal-hold calls on one object (or one version of it: still the same action).
    def needed(p: Mapping[str, Any], _: Arns) -> list[Permission]:
        return [Permission(action, _object(p["Bucket"], p["Key"]))]

    return needed


def _table_or_index(action: str) -> Callable[[Mapping[str, Any], Arns], list[Permission]]:
    def needed(p: Mapping[str, Any], arns: Arns) -> list[Permission]:
        resource = arns.table(p["TableName"])
        if p.get("IndexName"):
            resource += f"/index/{p['IndexName']}"
        return [Permission(action, resource)]

    return needed


def _batch_get(p: Mapping[str, Any], arns: Arns) -> list[Permission]:
    return [Permission("dynamodb:BatchGetItem", arns.table(name)) for name in p["RequestItems"]]


# A transaction is authorized action by action (DynamoDB developer guide, "Using IAM with
# DynamoDB transactions"): Put/Update/Delete as the single-item writes, ConditionCheck on its own.
_TRANSACT_ACTIONS = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
}


def _transact_write(p: Mapping[str, Any], arns: Arns) -> list[Permission]:
    return [
        Permission(_TRANSACT_ACTIONS[kind], arns.table(body["TableName"]))
        for entry in p["TransactItems"]
        for kind, body in entry.items()
    ]


def _textract(action: str, location: str | None) -> Callable[[Mapping[str, Any], Arns], list[Permission]]:
    # Textract's expense actions have no resource type ("*"), and Textract reads the S3 object it
    # is given with the caller's own permissions (forward access sessions).
    def needed(p: Mapping[str, Any], _: Arns) -> list[Permission]:
        out = [Permission(action, "*")]
        if location is not None:
            obj = p[location]["S3Object"]
            out.append(Permission("s3:GetObject", _object(obj["Bucket"], obj["Name"])))
        return out

    return needed


def _queue(action: str) -> Callable[[Mapping[str, Any], Arns], list[Permission]]:
    def needed(p: Mapping[str, Any], arns: Arns) -> list[Permission]:
        if "QueueUrl" in p:
            return [Permission(action, arns.queue(p["QueueUrl"]))]
        # GetQueueUrl names the queue (and its owner) instead.
        account = p.get("QueueOwnerAWSAccountId") or arns.account
        return [Permission(action, f"arn:aws:sqs:{arns.region}:{account}:{p['QueueName']}")]

    return needed


def _move_task(p: Mapping[str, Any], _: Arns) -> list[Permission]:
    # SQS moves the messages with the caller's permissions ("Configuring queue permissions for
    # dead-letter queue redrive"): it receives, deletes and reads attributes on the source queue
    # (the DLQ) and sends to the destination.
    source = p["SourceArn"]
    return [
        *(Permission(a, source) for a in ("sqs:StartMessageMoveTask", "sqs:ReceiveMessage", "sqs:DeleteMessage")),
        Permission("sqs:GetQueueAttributes", source),
        Permission("sqs:SendMessage", p["DestinationArn"]),
    ]


def _workgroup(action: str) -> Callable[[Mapping[str, Any], Arns], list[Permission]]:
    # Only StartQueryExecution names its workgroup; the query-id calls act on the query's own,
    # which for our jobs is always the stack's (the job passes it to every start).
    def needed(p: Mapping[str, Any], arns: Arns) -> list[Permission]:
        return [Permission(action, arns.workgroup(p.get("WorkGroup", "")))]

    return needed


def _export(p: Mapping[str, Any], arns: Arns) -> list[Permission]:
    # DynamoDB writes the export files with the caller's permissions (developer guide,
    # "Requesting a table export in DynamoDB": s3:AbortMultipartUpload, PutObject, PutObjectAcl),
    # under `<S3Prefix>/AWSDynamoDB/<export id>/`.
    prefix = p.get("S3Prefix", "").rstrip("/")
    files = _object(p["S3Bucket"], f"{prefix}/*" if prefix else "*")
    return [
        Permission("dynamodb:ExportTableToPointInTime", arns.dynamodb(p["TableArn"])),
        *(Permission(a, files) for a in ("s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectAcl")),
    ]


def _batch_write(p: Mapping[str, Any], arns: Arns) -> list[Permission]:
    return [Permission("dynamodb:BatchWriteItem", arns.table(name)) for name in p["RequestItems"]]


def _pitr_restore(p: Mapping[str, Any], arns: Arns) -> list[Permission]:
    # Authorized on the source table; DynamoDB then writes the target with the caller's read and
    # write permissions ("Using IAM with DynamoDB backup and restore"), which the role lists apart.
    return [Permission("dynamodb:RestoreTableToPointInTime", arns.table(p["SourceTableName"]))]


def _backup_restore(p: Mapping[str, Any], _: Arns) -> list[Permission]:
    # On the recovery point; the role AWS Backup restores with is passed to it (iam:PassRole).
    return [
        Permission("backup:StartRestoreJob", p["RecoveryPointArn"]),
        Permission("iam:PassRole", p["IamRoleArn"], (("iam:PassedToService", "backup.amazonaws.com"),)),
    ]


# Operations whose permissions depend on the answer as well as the request.
OUTCOME_AWARE: dict[tuple[str, str], Callable[[Mapping[str, Any], Arns, Mapping[str, Any]], list[Permission]]] = {
    ("s3", "GetObject"): _s3_read,
    ("s3", "HeadObject"): _s3_read,
}
OPERATIONS: dict[tuple[str, str], Callable[[Mapping[str, Any], Arns], list[Permission]]] = {
    ("s3", "PutObject"): _s3_put,
    ("sns", "Publish"): lambda p, _: [Permission("sns:Publish", p["TopicArn"])],
    # No resource type in IAM; the namespace is the request's cloudwatch:namespace condition key.
    ("cloudwatch", "PutMetricData"): lambda p, _: [
        Permission("cloudwatch:PutMetricData", "*", (("cloudwatch:namespace", p["Namespace"]),))
    ],
    ("s3", "ListObjectsV2"): _s3_list("s3:ListBucket"),
    ("s3", "ListObjectVersions"): _s3_list("s3:ListBucketVersions"),
    ("s3", "DeleteObjects"): _s3_delete_objects,
    ("s3", "PutObjectTagging"): _s3_object("s3:PutObjectTagging"),
    ("s3", "GetObjectTagging"): _s3_object("s3:GetObjectTagging"),
    ("s3", "PutObjectLegalHold"): _s3_object("s3:PutObjectLegalHold"),
    ("s3", "GetObjectLegalHold"): _s3_object("s3:GetObjectLegalHold"),
    ("dynamodb", "GetItem"): _table_or_index("dynamodb:GetItem"),
    ("dynamodb", "BatchGetItem"): _batch_get,
    ("dynamodb", "Query"): _table_or_index("dynamodb:Query"),
    ("dynamodb", "Scan"): _table_or_index("dynamodb:Scan"),
    ("dynamodb", "DescribeTable"): _table_or_index("dynamodb:DescribeTable"),
    ("dynamodb", "TransactWriteItems"): _transact_write,
    ("dynamodb", "BatchWriteItem"): _batch_write,
    ("dynamodb", "CreateTable"): _table_or_index("dynamodb:CreateTable"),
    ("dynamodb", "DeleteTable"): _table_or_index("dynamodb:DeleteTable"),
    ("dynamodb", "DeleteItem"): _table_or_index("dynamodb:DeleteItem"),
    ("dynamodb", "UpdateItem"): _table_or_index("dynamodb:UpdateItem"),
    ("dynamodb", "RestoreTableToPointInTime"): _pitr_restore,
    # AWS Backup's list and describe calls have no resource type in IAM.
    ("backup", "ListRecoveryPointsByResource"): lambda p, _: [Permission("backup:ListRecoveryPointsByResource", "*")],
    ("backup", "StartRestoreJob"): _backup_restore,
    ("backup", "DescribeRestoreJob"): lambda p, _: [Permission("backup:DescribeRestoreJob", "*")],
    ("dynamodb", "ExportTableToPointInTime"): _export,
    ("dynamodb", "DescribeExport"): lambda p, arns: [
        Permission("dynamodb:DescribeExport", arns.dynamodb(p["ExportArn"]))
    ],
    ("dynamodb", "DescribeContinuousBackups"): lambda p, arns: [
        Permission("dynamodb:DescribeContinuousBackups", arns.dynamodb(p["TableName"]))
    ],
    ("textract", "AnalyzeExpense"): _textract("textract:AnalyzeExpense", "Document"),
    ("textract", "StartExpenseAnalysis"): _textract("textract:StartExpenseAnalysis", "DocumentLocation"),
    ("textract", "GetExpenseAnalysis"): _textract("textract:GetExpenseAnalysis", None),
    ("sqs", "ReceiveMessage"): _queue("sqs:ReceiveMessage"),
    ("sqs", "DeleteMessage"): _queue("sqs:DeleteMessage"),
    ("sqs", "DeleteMessageBatch"): _queue("sqs:DeleteMessage"),
    ("sqs", "ChangeMessageVisibility"): _queue("sqs:ChangeMessageVisibility"),
    ("sqs", "ChangeMessageVisibilityBatch"): _queue("sqs:ChangeMessageVisibility"),
    ("sqs", "SendMessage"): _queue("sqs:SendMessage"),
    ("sqs", "SendMessageBatch"): _queue("sqs:SendMessage"),
    ("sqs", "GetQueueAttributes"): _queue("sqs:GetQueueAttributes"),
    ("sqs", "GetQueueUrl"): _queue("sqs:GetQueueUrl"),
    ("sqs", "StartMessageMoveTask"): _move_task,
    ("sqs", "ListMessageMoveTasks"): lambda p, _: [Permission("sqs:ListMessageMoveTasks", p["SourceArn"])],
    ("athena", "StartQueryExecution"): _workgroup("athena:StartQueryExecution"),
    ("athena", "GetQueryExecution"): _workgroup("athena:GetQueryExecution"),
    ("athena", "GetQueryResults"): _workgroup("athena:GetQueryResults"),
    ("athena", "StopQueryExecution"): _workgroup("athena:StopQueryExecution"),
}


class UnmappedOperationError(AssertionError):
    """A job called an operation the table does not know: add it (with AWS's documentation)."""


def permissions(calls: Iterable[Call], arns: Arns) -> set[Permission]:
    needed: set[Permission] = set()
    workgroup = ""
    for call in calls:
        if (call.service, call.operation) in OUTCOME_AWARE:
            needed.update(OUTCOME_AWARE[(call.service, call.operation)](call.params, arns, call.outcome))
            continue
        rule = OPERATIONS.get((call.service, call.operation))
        if rule is None:
            raise UnmappedOperationError(f"{call.service}.{call.operation} is not in iam_model.OPERATIONS")
        params = call.params
        if call.service == "athena":
            # A query id's calls act in the workgroup its StartQueryExecution named.
            if call.operation == "StartQueryExecution":
                workgroup = params.get("WorkGroup", "")
            else:
                params = {**params, "WorkGroup": workgroup}
        needed.update(rule(params, arns))
    return needed


# --- evaluation --------------------------------------------------------------------------------
@cache
def _pattern(glob: str) -> re.Pattern[str]:
    return re.compile("^" + "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob) + "$")


def matches(glob: str, value: str) -> bool:
    return bool(_pattern(glob).match(value))


def _condition_holds(operator: str, key: str, expected: Any, perm: Permission, principal: str | None) -> bool:
    actual = principal if key == "aws:PrincipalArn" else perm.value(key)
    values = [str(v).lower() if isinstance(v, bool) else str(v) for v in as_list(expected)]
    if operator == "Null":
        # "true": the key is absent from the request; "false": it is present.
        return (actual is None) == (values == ["true"])
    if operator in ("StringEquals", "ArnEquals", "Bool"):
        return actual is not None and actual in values
    if operator in ("StringLike", "ArnLike"):
        return actual is not None and any(matches(v, actual) for v in values)
    if operator in ("StringNotEquals", "ArnNotEquals"):
        return actual is None or actual not in values
    if operator in ("StringNotLike", "ArnNotLike"):
        return actual is None or not any(matches(v, actual) for v in values)
    raise NotImplementedError(f"condition operator {operator} is not modelled")


def _applies(stmt: Mapping[str, Any], perm: Permission, principal: str | None) -> bool:
    if perm.action.lower() not in {a.lower() for a in as_list(stmt["Action"])}:
        return False
    if not any(matches(r, perm.resource) for r in as_list(stmt["Resource"])):
        return False
    return all(
        _condition_holds(operator, key, expected, perm, principal)
        for operator, keys in stmt.get("Condition", {}).items()
        for key, expected in keys.items()
    )


def allowed(policy: Mapping[str, Any], perm: Permission) -> bool:
    return any(s["Effect"] == "Allow" and _applies(s, perm, None) for s in policy["Statement"])


def denied(policy: Mapping[str, Any], perm: Permission, principal: str) -> bool:
    """Whether an explicit Deny of this (resource) policy refuses `perm` to `principal`."""
    return any(s["Effect"] == "Deny" and _applies(s, perm, principal) for s in policy["Statement"])


def grants(policy: Mapping[str, Any]) -> set[tuple[str, str]]:
    """Every (action, resource pattern) an identity policy allows."""
    return {
        (action, resource)
        for s in policy["Statement"]
        if s["Effect"] == "Allow"
        for action in as_list(s["Action"])
        for resource in as_list(s["Resource"])
    }
