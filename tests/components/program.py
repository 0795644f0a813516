"""Pulumi unit-test mocks for the DocuFlow program and the recorded-graph helpers.

Imported first by conftest.py (so the mocks are set before any component is imported) and by
the tests under one module name, so there is exactly one mocks instance.

A recording Mocks class stores every registered resource (type, name, inputs, URN) and answers
with plausible ids, ARNs, names and URLs. The program itself (`__main__.py`, loaded with runpy)
is run once per stack file under the mocks; tests assert on the recorded graph and on outputs.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
import re
import runpy
import threading
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi.runtime.mocks import MockMonitor

REPO_ROOT = Path(__file__).resolve().parents[2]
PROGRAM = REPO_ROOT / "__main__.py"
ACCOUNT = "123456789012"
REGION = "eu-west-1"


@dataclass
class Recorded:
    typ: str
    name: str
    inputs: dict[str, Any]
    custom: bool
    urn: str = ""
    parent: str = ""
    protect: bool = False
    retain_on_delete: bool = False
    # The aliases the resource declares: {"urn": …} or {"name", "type", "parent"} (an alias spec).
    aliases: list[dict[str, str]] = field(default_factory=list)
    provider: str = ""  # "urn::id" of an explicit provider (the second region's), "" for the default
    outputs: dict[str, Any] = field(default_factory=dict)  # what the mocks answered (ids, ARNs)


class RecordingMocks(pulumi.runtime.Mocks):
    def __init__(self) -> None:
        self.resources: list[Recorded] = []
        self.region = REGION  # the stack's (run_program sets it); explicit providers name their own
        self.images: list[tuple[str, str]] = []  # (tag, digest) in the stack's ECR repository: none
        self._provider_regions: dict[str, str] = {}

    def region_for(self, provider: str | None) -> str:
        return self._provider_regions.get((provider or "").split("::")[-1], self.region)

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.typ == "pulumi:providers:aws":
            self._provider_regions[f"{args.name}-id"] = str(args.inputs["region"])
        rid, outputs = _plausible(args.typ, args.name, dict(args.inputs), self.region_for(args.provider))
        self.resources.append(
            Recorded(
                args.typ, args.name, dict(args.inputs), bool(args.custom), provider=args.provider or "", outputs=outputs
            )
        )
        return rid, outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        if args.token == "aws:index/getCallerIdentity:getCallerIdentity":
            return {
                "accountId": ACCOUNT,
                "arn": f"arn:aws:iam::{ACCOUNT}:user/ci",
                "userId": "AIDAEXAMPLE",
                "id": ACCOUNT,
            }
        if args.token == "aws:ecr/getImages:getImages":  # the stack's repository, as `images` says
            ids = [{"imageTag": tag, "imageDigest": digest} for tag, digest in self.images]  # as the provider
            return {"id": args.args["repositoryName"], "repositoryName": args.args["repositoryName"], "imageIds": ids}
        raise NotImplementedError(f"unmocked call {args.token}")


@dataclass(frozen=True)
class _Made:
    """A resource being registered: what its plausible id and outputs are made from."""

    name: str
    inputs: dict[str, Any]
    region: str

    @property
    def physical(self) -> str:
        return str(self.inputs.get("name") or f"{self.name}-1a2b3c")

    def arn(self, service: str, resource: str) -> str:
        return f"arn:aws:{service}:{self.region}:{ACCOUNT}:{resource}"


def _bucket(m: _Made) -> tuple[str, dict[str, Any]]:
    bucket = m.inputs.get("bucket") or f"{m.name}-1a2b3c"
    return bucket, {"bucket": bucket, "arn": f"arn:aws:s3:::{bucket}"}


def _table(m: _Made) -> tuple[str, dict[str, Any]]:
    arn = m.arn("dynamodb", f"table/{m.physical}")
    return m.physical, {"name": m.physical, "arn": arn, "streamArn": f"{arn}/stream/2026-11-29T00:00:00.000"}


def _key(m: _Made) -> tuple[str, dict[str, Any]]:
    # The stack's data key keeps a fixed id (tests spell its ARN); the keys of the components
    # nested under another (the backup vaults', the second region's) get their own.
    nested = m.name.endswith("-key-key")
    rid = str(uuid.uuid5(uuid.NAMESPACE_DNS, m.name)) if nested else "1234abcd-12ab-34cd-56ef-1234567890ab"
    return rid, {"keyId": rid, "arn": m.arn("kms", f"key/{rid}")}


def _queue(m: _Made) -> tuple[str, dict[str, Any]]:
    url = f"https://sqs.{m.region}.amazonaws.com/{ACCOUNT}/{m.physical}"
    return url, {"name": m.physical, "arn": m.arn("sqs", m.physical), "url": url}


def _repository(m: _Made) -> tuple[None, dict[str, Any]]:
    url = f"{ACCOUNT}.dkr.ecr.{m.region}.amazonaws.com/{m.physical}"
    return None, {"name": m.physical, "arn": m.arn("ecr", f"repository/{m.physical}"), "repositoryUrl": url}


def _named(service: str, resource: str, rid: str | None = None) -> Callable[[_Made], tuple[str | None, dict[str, Any]]]:
    """A resource with a name and an ARN `resource` (formatted with `physical`, `name` and the
    inputs); its id `rid` likewise: "arn" for its ARN, None for the mocks' default.
    """

    def made(m: _Made) -> tuple[str | None, dict[str, Any]]:
        fields = {**m.inputs, "physical": m.physical, "name": m.name}
        arn = m.arn(service, resource.format(**fields)) if service != "iam" else resource.format(**fields)
        out = {"name": m.physical, "arn": arn}
        return (arn if rid == "arn" else rid.format(**fields) if rid else None), out

    return made


# type → how AWS names it; types not listed get their inputs back and `<name>-id`.
_SHAPES: dict[str, Callable[[_Made], tuple[str | None, dict[str, Any]]]] = {
    "aws:s3/bucket:Bucket": _bucket,
    "aws:dynamodb/table:Table": _table,
    "aws:kms/key:Key": _key,
    "aws:sqs/queue:Queue": _queue,
    "aws:ecr/repository:Repository": _repository,
    "aws:iam/role:Role": _named("iam", f"arn:aws:iam::{ACCOUNT}:role/{{physical}}", "{physical}"),
    "aws:iam/policy:Policy": _named("iam", f"arn:aws:iam::{ACCOUNT}:policy/{{physical}}", "arn"),
    "aws:ecs/cluster:Cluster": _named("ecs", "cluster/{physical}", "arn"),
    "aws:cloudwatch/logGroup:LogGroup": _named("logs", "log-group:{physical}"),
    "aws:sns/topic:Topic": _named("sns", "{physical}", "arn"),
    "aws:pipes/pipe:Pipe": _named("pipes", "pipe/{physical}"),
    "aws:cloudwatch/eventRule:EventRule": _named("events", "rule/{physical}"),
    "aws:kinesis/firehoseDeliveryStream:FirehoseDeliveryStream": _named("firehose", "deliverystream/{physical}", "arn"),
    "aws:cloudtrail/trail:Trail": _named("cloudtrail", "trail/{physical}", "arn"),
}
# Types whose outputs carry an ARN and no name.
_ARN_ONLY: dict[str, tuple[str, str, str | None]] = {
    "aws:ecs/taskDefinition:TaskDefinition": ("ecs", "task-definition/{family}:1", "{family}"),
    "aws:kms/alias:Alias": ("kms", "{physical}", None),
    "aws:athena/workgroup:Workgroup": ("athena", "workgroup/{physical}", "{physical}"),
    "aws:glue/catalogDatabase:CatalogDatabase": ("glue", "database/{physical}", f"{ACCOUNT}:{{physical}}"),
    "aws:backup/vault:Vault": ("backup", "backup-vault:{physical}", "{physical}"),
    "aws:backup/plan:Plan": ("backup", "backup-plan:{name}-1a2b", "{name}-1a2b"),
    "aws:glue/catalogTable:CatalogTable": (
        "glue",
        "table/{databaseName}/{physical}",
        f"{ACCOUNT}:{{databaseName}}:{{physical}}",
    ),
}


def _plausible(typ: str, name: str, inputs: dict[str, Any], region: str) -> tuple[str, dict[str, Any]]:
    """The id and the computed outputs AWS would return for `typ` in `region`."""
    made = _Made(name, inputs, region)
    out = dict(inputs)
    rid: str | None = None
    if typ in _SHAPES:
        rid, shaped = _SHAPES[typ](made)
        out.update(shaped)
    elif typ in _ARN_ONLY:
        service, resource, rid_format = _ARN_ONLY[typ]
        fields = {**inputs, "physical": made.physical, "name": name}
        out["arn"] = made.arn(service, resource.format(**fields))
        rid = rid_format.format(**fields) if rid_format else None
    elif typ.startswith("aws:scheduler/"):
        out.update(name=made.physical, arn=made.arn("scheduler", f"schedule/{made.physical}"))
    if typ == "aws:ecs/taskDefinition:TaskDefinition":
        out["revision"] = 1
    return rid or f"{name}-id", out


def _alias(alias: Any) -> dict[str, str]:
    if alias.urn:
        return {"urn": alias.urn}
    return {"name": alias.spec.name, "type": alias.spec.type, "parent": alias.spec.parentUrn}


class RecordingMonitor(MockMonitor):
    """Adds what only the registration request carries: URN, parent URN and `protect`."""

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        with self._lock:
            for rec in reversed(MOCKS.resources):
                if rec.typ == request.type and rec.name == request.name and not rec.urn:
                    rec.urn, rec.parent = response.urn, request.parent
                    rec.protect = bool(request.protect)
                    rec.retain_on_delete = bool(request.retainOnDelete)
                    rec.aliases = [_alias(a) for a in request.aliases]
                    break
        return response

    _lock = threading.Lock()


with warnings.catch_warnings():
    # pulumi_aws's deprecated *V2 modules warn when they are loaded, which the SDK's resource
    # registry does lazily whether or not they are used; load them once here, quietly (the
    # program uses none of them: test_policy_rules checks the recorded types).
    warnings.simplefilter("ignore", DeprecationWarning)
    import pulumi_aws.s3

    for _module in pkgutil.iter_modules(pulumi_aws.s3.__path__):
        importlib.import_module(f"pulumi_aws.s3.{_module.name}")

MOCKS = RecordingMocks()
MONITOR = RecordingMonitor(MOCKS)
pulumi.runtime.set_mocks(MOCKS, project="docuflow", stack="dev", preview=False, monitor=MONITOR)


def _strings(values: dict[str, Any]) -> dict[str, str]:
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in values.items()}


def project_config() -> dict[str, str]:
    """The defaults Pulumi.yaml declares (`config:`), as the engine merges them: strings."""
    declared = yaml.safe_load((REPO_ROOT / "Pulumi.yaml").read_text())["config"]
    return _strings({k: d["default"] for k, d in declared.items() if "default" in d})


def stack_config(stack: str) -> dict[str, str]:
    """A Pulumi.<stack>.yaml config block as the engine hands it to the program: strings, with
    the project's declared defaults for the keys the stack does not set.
    """
    raw = yaml.safe_load((REPO_ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    return project_config() | _strings(raw)


def stack_files() -> list[str]:
    return sorted(p.name.split(".")[1] for p in REPO_ROOT.glob("Pulumi.*.yaml"))


@dataclass
class ProgramRun:
    stack: str
    resources: list[Recorded]
    outputs: dict[str, Any]
    namespace: dict[str, Any]

    def of_type(self, typ: str) -> list[Recorded]:
        return [r for r in self.resources if r.typ == typ]

    def one(self, typ: str) -> Recorded:
        found = self.of_type(typ)
        assert len(found) == 1, f"expected one {typ}, found {[r.name for r in found]}"
        return found[0]

    def region_of(self, rec: Recorded) -> str:
        """The region a resource is managed in: its explicit provider's, else the stack's."""
        if not rec.provider:
            return stack_config(self.stack)["aws:region"]
        name = rec.provider.split("::")[-1].removesuffix("-id")
        (provider,) = [r for r in self.resources if r.typ == "pulumi:providers:aws" and r.name == name]
        return str(provider.inputs["region"])

    def named(self, name: str) -> Recorded:
        found = [r for r in self.resources if r.name == name]
        assert len(found) == 1, f"expected one resource named {name}"
        return found[0]

    @property
    def custom(self) -> list[Recorded]:
        return [r for r in self.resources if r.custom]


def run_program(stack: str) -> ProgramRun:
    """Run __main__.py's build() for Pulumi.<stack>.yaml under the mocks; record what it made."""
    pulumi.runtime.set_all_config(stack_config(stack))
    MOCKS.region = stack_config(stack)["aws:region"]
    start = len(MOCKS.resources)
    namespace = runpy.run_path(str(PROGRAM), run_name="docuflow_program")
    holder: dict[str, Any] = {}

    @pulumi.runtime.test
    def run() -> pulumi.Output[Any]:
        holder["outputs"] = namespace["build"](namespace["load_settings"]())
        return pulumi.Output.all(*holder["outputs"].values())

    run()
    return ProgramRun(stack, MOCKS.resources[start:], holder["outputs"], namespace)


_RUNS: dict[str, ProgramRun] = {}


def program_run(stack: str) -> ProgramRun:
    if stack not in _RUNS:
        _RUNS[stack] = run_program(stack)
    return _RUNS[stack]


def policy_documents(run: ProgramRun) -> list[tuple[str, dict[str, Any]]]:
    """Every JSON policy in the graph: role inline policies, trust, bucket, key, topic, queue policies."""
    docs: list[tuple[str, dict[str, Any]]] = []
    fields: dict[str, tuple[str, ...]] = {
        "aws:iam/rolePolicy:RolePolicy": ("policy",),
        "aws:iam/policy:Policy": ("policy",),
        "aws:iam/role:Role": ("assumeRolePolicy",),
        "aws:s3/bucketPolicy:BucketPolicy": ("policy",),
        "aws:kms/key:Key": ("policy",),
        "aws:sns/topicPolicy:TopicPolicy": ("policy",),
        "aws:sqs/queuePolicy:QueuePolicy": ("policy",),
    }
    for rec in run.resources:
        docs.extend(
            (f"{rec.name}.{field_name}", json.loads(rec.inputs[field_name])) for field_name in fields.get(rec.typ, ())
        )
    return docs


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def catalog_grants(stage: str, region: str = REGION, account: str = ACCOUNT) -> Any:
    """The audit catalog's ARNs for `stage` as AuditCatalog hands them to the roles
    (jobs.contract.iam.CatalogArns), spelled from the contract's names.
    """
    from jobs.contract import layout
    from jobs.contract.iam import CatalogArns

    glue = f"arn:aws:glue:{region}:{account}"
    database = layout.glue_database_name(stage)
    return CatalogArns(
        audit_bucket_arn=f"arn:aws:s3:::{layout.bucket_name(stage, layout.AUDIT_DATA)}",
        workgroup_arn=f"arn:aws:athena:{region}:{account}:workgroup/{layout.athena_workgroup_name(stage)}",
        glue_catalog_arn=f"{glue}:catalog",
        glue_database_arn=f"{glue}:database/{database}",
        glue_table_arns=[
            f"{glue}:table/{database}/{t}"
            for t in (
                *layout.GLUE_INVENTORY_TABLES.values(),
                layout.GLUE_EXPORT_TABLE,
                layout.GLUE_INCREMENTAL_TABLE,
                layout.GLUE_STATE_TABLE,
            )
        ],
        state_table_arn=f"{glue}:table/{database}/{layout.GLUE_STATE_TABLE}",
    )


def task_policy(builder: Callable[[Any], dict[str, Any]], **given: Any) -> dict[str, Any]:
    """A task role's policy (a registry task's builder) for the resources `given`. The required
    ones not given are placeholders (`unused:<field>`), which a builder that took one would show
    in its statements; the optional ones not given are absent, as on a stack without them.
    """
    from jobs.contract.iam import TaskResources

    required = [f.name for f in dataclasses.fields(TaskResources) if f.default is dataclasses.MISSING]
    return builder(TaskResources(**{**{name: f"unused:{name}" for name in required}, **given}))


Check = Callable[[list[Any]], None]


def run_as_main(config: dict[str, str]) -> list[Recorded]:
    """Execute __main__.py exactly as the Pulumi language host does (run_name="__main__")."""
    pulumi.runtime.set_all_config(config)
    start = len(MOCKS.resources)

    @pulumi.runtime.test
    def run() -> None:
        runpy.run_path(str(PROGRAM), run_name="__main__")

    run()
    # A resource an earlier run creates inside an apply callback can register after that run
    # returned, and land among this run's: keep only this stage's (every name is docuflow-<stage>…).
    stage = config.get("docuflow:stage", "")
    other = re.compile(r"docuflow-(?!" + re.escape(stage) + r"(?:-|$))[a-z0-9]+(?:-|$)")
    return [r for r in MOCKS.resources[start:] if not (stage and other.match(r.name))]
