"""BatchJobs: the ECS cluster, the job tasks (ingest, reconcile, repair on a nightly schedule, the
restore drill quarterly; the erasure, a document's owner actions and legal holds started by
hand), and their schedules, all as the job registry (jobs.runtime.registry) declares them: each
task's command, the name of its role's policy builder, its size and its schedule.

EventBridge Scheduler starts N ingest tasks that drain the one arrival queue together (SQS spreads
the messages; a full `--backfill` sweep is a one-off task, docs/deploy.md) and, later, one
reconcile. Reconcile is an audit that cannot write the table; `reconcile --repair`
runs as its own task definition with its own role (the audit's reads plus the conditional puts
of its repairs), and the nightly schedule starts it unless the stack turns nightly repair off.
The GDPR erasure runs as its own task definition with its own role: with the owner's restore
(which removes delete markers, s3:DeleteObjectVersion to IAM) it is the only role that may delete
object versions; legal holds are an operator's task, apart from the owner's delete and restore.
A quarterly schedule runs the restore drill (`python -m jobs drill`) with a role that may create
and write drill tables only.
Task and execution roles get policies from components.policies; the
containers run as a non-root user on a read-only root filesystem with a scratch volume at /tmp
and receive only non-secret names (jobs.settings.JOB_ENV_VARS) in their environment. Failed
tasks and undeliverable schedule invocations alarm to the alert topic.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pulumi
import pulumi_aws as aws

from components import policies, recovery_policies
from components._pulumi import child, json_document
from components.alerts import QUIET_EXITS, alert_target, encrypted_queue, failed_task_alert, queue_depth_alarm
from jobs.contract import layout
from jobs.contract.engines import OcrEngine
from jobs.contract.erasure import DataHoldings
from jobs.contract.metrics import namespace
from jobs.contract.schema import TABLE_STATE_DAYS
from jobs.runtime.registry import Schedule, TaskSpec, tasks
from jobs.settings import (
    ENV_CATCH_UP_DAYS,
    ENV_HOLDINGS,
    ENV_IMAGE_DIGEST,
    ENV_OCR_ENGINE,
    ENV_REANCHOR_DAYS,
    ENV_REPORT_SIGNING_KEY,
    ENV_REPORTS_TOPIC_ARN,
    ENV_TABLE_ARN,
    ENV_TABLE_STATE_DAYS,
    ENV_TEXTRACT_MAX_PAGES,
    JOB_ENV_VARS,
    env_name,
)

CONTAINER_NAME = "job"
SCRATCH_VOLUME = "scratch"
SCRATCH_PATH = "/tmp"
# Numeric, so ECS can check it is not root without reading the image's /etc/passwd.
JOB_USER = "10001:10001"
STOP_TIMEOUT_SECONDS = 120
ENTRYPOINT = ["python", "-m", "jobs"]
# One task definition, role and log group per task of the registry. The scheduled ones run as
# they are: the drain (stopping in time for the reconcile), the reconcile and its repair (the
# nightly chain, jobs/reconcile/nightly.py), the restore drill (dropping its table once reported);
# the others are started by hand with a command override that names the user and document
# (`erase --user U`, `documents delete --user U --doc D`, ...).
TASKS: dict[str, TaskSpec] = {name: task for name, (_, task) in tasks().items()}
JOBS = tuple(TASKS)
RECONCILE_JOBS = tuple(name for name, (job, _) in tasks().items() if job.name == "reconcile")
RECONCILE_ENGINES = ("polars", "athena")
# The modules the registry's policy builders are named in (`policies.ingest_task_policy`).
POLICY_MODULES = {"policies": policies, "recovery_policies": recovery_policies}
ENV_TEXTRACT_FALLBACK = env_name("textract_fallback")
ENV_SCHEDULE_TIMEZONE = env_name("schedule_timezone")
ENV_SCHEDULED_TIME = env_name("scheduled_time")
# EventBridge Scheduler replaces this keyword in a target's Input with the time the schedule meant
# the invocation for (a retry keeps it): the job's drain bound and its "scheduled, not manual".
SCHEDULED_TIME_ATTRIBUTE = "<aws.scheduler.scheduled-time>"


def scheduled_input() -> str:
    """The schedules' target Input: for an ECS RunTask target, Scheduler passes it as the task's
    overrides (TaskOverride), so the job container gets DOCUFLOW_SCHEDULED_TIME set to the
    scheduled time, beside the task definition's environment. Set only here: a task started by
    hand has none, and knows itself as manual.
    """
    return json.dumps(
        {
            "containerOverrides": [
                {
                    "name": CONTAINER_NAME,
                    "environment": [{"name": ENV_SCHEDULED_TIME, "value": SCHEDULED_TIME_ATTRIBUTE}],
                }
            ]
        }
    )


# The polars engine's nightly also checks the change log, reading the last days' deliveries
# (earlier days were checked by earlier nights; docs/audit.md). The athena engine does not.
AUDIT_LOG_ARGS = ["--audit-log", "--audit-window", "3d"]


def job_command(job: str, reconcile_engine: str = "polars", drain_minutes: int | None = None) -> list[str]:
    """The task's command (the registry's); the reconcile and its repair name the engine unless it
    is the default, and with the default engine check the change log too; the scheduled drain
    stops taking work after `drain_minutes`, in time for the reconcile.
    """
    if reconcile_engine not in RECONCILE_ENGINES:
        raise ValueError(f"reconcile engine must be one of {RECONCILE_ENGINES}, not {reconcile_engine!r}")
    command = list(TASKS[job].command)
    if job == "ingest" and drain_minutes is not None:
        return [*command, "--max-minutes", str(drain_minutes)]
    if job not in RECONCILE_JOBS:
        return command
    if reconcile_engine == "athena":  # the chain over the kept Iceberg table, in the workgroup
        return ["reconcile", "athena", "--nightly", *command[2:]]
    return [*command, *AUDIT_LOG_ARGS]


@dataclass
class JobSize:
    cpu: int = 1024
    memory: int = 2048


def task_sizes(configured: Mapping[str, JobSize] | None = None) -> dict[str, JobSize]:
    """Each task's size: the registry's, or the stack's for its size setting (`ingest`, `reconcile`)."""
    configured = configured or {}
    return {
        name: configured.get(task.size.setting or "", JobSize(task.size.cpu, task.size.memory))
        for name, task in TASKS.items()
    }


def schedule_default(name: str) -> str:
    """The registry's default expression of the schedule `name`."""
    return next(t.schedule.default for t in TASKS.values() if t.schedule is not None and t.schedule.name == name)


@dataclass
class BatchJobsArgs:
    stage: str
    region: str
    account_id: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    table_arn: pulumi.Input[str]
    index_arn: pulumi.Input[str]
    bucket_arns: Mapping[str, pulumi.Input[str]]  # the data buckets, the audit-data and audit-trail buckets
    arrivals_queue_arn: pulumi.Input[str]
    arrivals_dead_letter_queue_arn: pulumi.Input[str]
    # JobSettings.env(): exactly JOB_ENV_VARS; an Output, as the queue URL is known only after it exists.
    job_environment: pulumi.Input[Mapping[str, str]]
    subnet_ids: Sequence[str]
    security_group_ids: Sequence[str]
    alarm_topic_arn: pulumi.Input[str]
    # The image by digest: in a configured registry/repository, or (None) the stack's own ECR
    # repository, which keeps the newest image_keep_count images and every release-tagged one.
    image_digest: str
    image_repository: str | None = None
    image_keep_count: int = 30
    image_release_tag_prefixes: Sequence[str] = ()
    # The stack's own repository: the tag image_digest is pushed under (kept by the lifecycle
    # policy whatever else it expires, and checked to name image_digest at `up`).
    image_tag: str | None = None
    assign_public_ip: bool = False
    fargate_spot: bool = False
    # Ingest tasks the nightly schedule starts; they drain the one arrival queue together.
    ingest_tasks: int = 1
    ingest_schedule: str = schedule_default("ingest")
    reconcile_schedule: str = schedule_default("reconcile")
    schedule_timezone: str = "UTC"
    retry_attempts: int = 2
    max_event_age_seconds: int = 3600
    # The nightly reconcile repairs what it safely can (the repair task) or only reports it.
    nightly_repair: bool = True
    # The restore drill's schedule, and the AWS Backup role its restores from a backup pass on.
    drill_schedule: str = schedule_default("drill")
    backup_role_arn: pulumi.Input[str] | None = None
    # Each task's size; a task not named here has the registry's (task_sizes gives both).
    sizes: Mapping[str, JobSize] = field(default_factory=task_sizes)
    # The scheduled drain stops taking work after this many minutes (components.settings derives
    # it from the ingest and reconcile schedules); None: it runs until the queue is empty.
    drain_minutes: int | None = None
    log_retention_days: int = 365
    # Scans in the ingest: "textract" grants the AnalyzeExpense actions; "local"/"off" grant none.
    ocr_engine: OcrEngine = OcrEngine.TEXTRACT
    textract_max_pages: int = 0  # per night, every ingest task's together (jobs/ingest/pages.py); 0: no cap
    # Text-layer PDFs bound for review read by Textract too (components.settings: textractFallback).
    textract_fallback: bool = False
    # "athena": the reconcile and repair run with --engine athena, and their roles get the audit
    # catalog's grants (AuditCatalog.grants, required then).
    reconcile_engine: str = "polars"
    catalog_grants: pulumi.Input[policies.CatalogArns] | None = None
    # The nightly chain: re-anchor with a full export this many days after the last one; a state
    # older than catch-up days is re-anchored too (JobSettings' reconcile_* settings).
    reanchor_days: int = 30
    catch_up_days: int = 7
    table_state_days: int = TABLE_STATE_DAYS  # the states' expiry: how long a state keeps earlier files
    # What still holds an erased user's data, and how long: the erasure's receipt says so.
    holdings: DataHoldings = field(default_factory=DataHoldings)
    tags: dict[str, str] = field(default_factory=dict)
    # The report signing key's ARN (ReportSigningKey.key_arn), which the reconcile tasks sign with
    # and name: an ARN, since an alias can be moved to another key.
    report_signing_key_arn: pulumi.Input[str] | None = None


def job_environment(values: Mapping[str, str]) -> list[dict[str, str]]:
    """The container environment: exactly JOB_ENV_VARS (names, never secrets), in their order."""
    missing = set(JOB_ENV_VARS) - set(values)
    extra = set(values) - set(JOB_ENV_VARS)
    if missing or extra:
        raise ValueError(f"job environment must be JOB_ENV_VARS: missing {missing}, extra {extra}")
    return [{"name": name, "value": values[name]} for name in JOB_ENV_VARS]


def _container_definitions(
    values: dict[str, Any],
    *,
    job: str,
    region: str,
    ocr_engine: str | None,
    reconcile_engine: str,
    chain: Mapping[str, int],
    holdings: DataHoldings | None,
    textract_max_pages: int = 0,
    drain_minutes: int | None = None,
    textract_fallback: bool = False,
    schedule_timezone: str = "UTC",
) -> str:
    """A task definition's containerDefinitions (its one job container) once its Outputs resolve."""
    container = container_definition(
        job=job,
        image=values["image"],
        log_group=values["log_group"],
        region=region,
        environment=values["environment"],
        ocr_engine=ocr_engine,
        reconcile_engine=reconcile_engine,
        table_arn=values["table_arn"],
        chain=chain,
        holdings=holdings,
        reports_topic_arn=values["reports_topic_arn"],
        signing_key_arn=values["signing_key_arn"],
        textract_max_pages=textract_max_pages,
        drain_minutes=drain_minutes,
        textract_fallback=textract_fallback,
        schedule_timezone=schedule_timezone,
    )
    return json.dumps([container])


def container_definition(
    *,
    job: str,
    image: str,
    log_group: str,
    region: str,
    environment: Mapping[str, str],
    ocr_engine: str | None = None,
    reconcile_engine: str = "polars",
    table_arn: str | None = None,
    chain: Mapping[str, int] | None = None,
    holdings: DataHoldings | None = None,
    reports_topic_arn: str | None = None,
    textract_max_pages: int = 0,
    drain_minutes: int | None = None,
    textract_fallback: bool = False,
    schedule_timezone: str = "UTC",
    signing_key_arn: str | None = None,
) -> dict[str, Any]:
    """One job container, hardened: non-root, read-only root fs, no privileges, awslogs.

    Beside JOB_ENV_VARS, non-secret settings only one job reads: the OCR engine (the ingest), for
    the nightly reconcile and its repair the table's ARN (they export the table) and the chain's
    re-anchor and catch-up days, and the stack's data-holding figures (the erasure's receipt).
    """
    extra = _job_environment_extra(
        job,
        image,
        ocr=_ocr_environment(ocr_engine, textract_max_pages, textract_fallback),
        schedule_timezone=schedule_timezone,
        table_arn=table_arn,
        chain=chain,
        holdings=holdings,
        reports_topic_arn=reports_topic_arn,
        signing_key_arn=signing_key_arn,
    )
    return {
        "name": CONTAINER_NAME,
        "image": image,
        "essential": True,
        "entryPoint": ENTRYPOINT,
        "command": job_command(job, reconcile_engine, drain_minutes),
        "user": JOB_USER,
        "readonlyRootFilesystem": True,
        "privileged": False,
        # SIGTERM to SIGKILL: Fargate's most (the default is 30 s). A job stops at its next clean
        # point (docs/operations.md, Exit codes): an erasure's batch, a drill's restore wait.
        "stopTimeout": STOP_TIMEOUT_SECONDS,
        "linuxParameters": {"initProcessEnabled": True, "capabilities": {"drop": ["ALL"]}},
        # Extraction and polars spill to /tmp: a task-local volume, since the root fs is read-only.
        "mountPoints": [{"sourceVolume": SCRATCH_VOLUME, "containerPath": SCRATCH_PATH, "readOnly": False}],
        "environment": job_environment(environment) + [{"name": n, "value": v} for n, v in extra.items()],
        "logConfiguration": log_configuration(log_group, region, job),
    }


def _job_environment_extra(
    job: str,
    image: str,
    *,
    ocr: Mapping[str, str],
    schedule_timezone: str,
    table_arn: str | None,
    chain: Mapping[str, int] | None,
    holdings: DataHoldings | None,
    reports_topic_arn: str | None,
    signing_key_arn: str | None,
) -> dict[str, str]:
    """The settings beside JOB_ENV_VARS that only some jobs read (see container_definition)."""
    # Every job's nights are dates in the schedule's zone (a page cap's night, a report's night).
    extra = {
        ENV_SCHEDULE_TIMEZONE: schedule_timezone,
        **ocr,
    }
    if holdings is not None:
        extra[ENV_HOLDINGS] = holdings.to_env()
    if job in RECONCILE_JOBS:
        if not table_arn:
            raise ValueError("the nightly reconcile needs the table's ARN to export it")
        extra[ENV_TABLE_ARN] = table_arn
        extra.update({name: str(days) for name, days in (chain or {}).items()})
        # The reports they write are signed with the stack's key (its ARN: an alias is no identity)
        # and name the image that wrote them.
        if signing_key_arn:
            extra[ENV_REPORT_SIGNING_KEY] = signing_key_arn
        extra[ENV_IMAGE_DIGEST] = image.rpartition("@")[2]
        if reports_topic_arn:  # each written report is announced on the stack's alert topic
            extra[ENV_REPORTS_TOPIC_ARN] = reports_topic_arn
    return extra


def _ocr_environment(ocr_engine: str | None, textract_max_pages: int, textract_fallback: bool) -> dict[str, str]:
    """The ingest's reading settings: its engine, the night's Textract page cap, the second opinion."""
    extra = {ENV_OCR_ENGINE: ocr_engine} if ocr_engine is not None else {}
    if textract_max_pages:
        extra[ENV_TEXTRACT_MAX_PAGES] = str(textract_max_pages)
    if textract_fallback:
        extra[ENV_TEXTRACT_FALLBACK] = "true"
    return extra


def log_configuration(log_group: str, region: str, job: str) -> dict[str, Any]:
    """awslogs, non-blocking: a slow log stream never stalls the job."""
    return {
        "logDriver": "awslogs",
        "options": {
            "awslogs-group": log_group,
            "awslogs-region": region,
            "awslogs-stream-prefix": job,
            "mode": "non-blocking",
            "max-buffer-size": "4m",
        },
    }


def policy_builder(name: str) -> Callable[..., policies.Policy]:
    """The policy builder the registry names (`policies.x`, `recovery_policies.x`)."""
    module, _, function = name.partition(".")
    builder: Callable[..., policies.Policy] = getattr(POLICY_MODULES[module], function)
    return builder


def builder_inputs(builder: Callable[..., Any], available: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs `builder` takes, of those `available`; KeyError names a required one missing."""
    taken: dict[str, Any] = {}
    for name, parameter in inspect.signature(builder).parameters.items():
        if name in available:
            taken[name] = available[name]
        elif parameter.default is inspect.Parameter.empty:
            raise KeyError(f"{builder.__name__} needs {name!r}, which the stack does not give")
    return taken


def scheduled_tasks(args: BatchJobsArgs) -> dict[str, Schedule]:
    """The tasks the stack schedules, with their schedule (a `when` setting picks one of two)."""
    return {
        name: task.schedule
        for name, task in TASKS.items()
        if task.schedule is not None
        and (task.schedule.when is None or getattr(args, task.schedule.when[0]) == task.schedule.when[1])
    }


def failed_task_pattern(cluster_arn: str, task_definition_arns: Sequence[str]) -> dict[str, Any]:
    """A job task that needs a person: it stopped with an exit code outside alerts.QUIET_EXITS (bad
    input, AWS unreachable, a bug, SIGKILL's 137), or never started (image pull, capacity).
    """
    return {
        "source": ["aws.ecs"],
        "detail-type": ["ECS Task State Change"],
        "detail": {
            "clusterArn": [cluster_arn],
            "taskDefinitionArn": list(task_definition_arns),
            "lastStatus": ["STOPPED"],
            "$or": [
                {"containers": {"exitCode": [{"anything-but": list(QUIET_EXITS)}]}},
                {"stopCode": ["TaskFailedToStart"]},
            ],
        },
    }


class BatchJobs(pulumi.ComponentResource):
    """The job runtime, built in the order AWS needs it: cluster, then the task definitions and
    their roles, then the schedules that start them, then the alarms that watch them.
    """

    cluster_arn: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    task_definition_arns: dict[str, pulumi.Output[str]]
    task_role_arns: dict[str, pulumi.Output[str]]
    execution_role_arn: pulumi.Output[str]
    repository_url: pulumi.Output[str] | None
    schedule_names: list[pulumi.Output[str]]
    dead_letter_queue_url: pulumi.Output[str]

    def __init__(self, name: str, args: BatchJobsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:batch_jobs:BatchJobs", name, None, opts)
        self._name = name
        self._args = args
        self._prefix = layout.stage_prefix(args.stage)
        if args.ocr_engine not in set(OcrEngine):
            raise ValueError(f"ocr_engine must be one of {', '.join(OcrEngine)}, not {args.ocr_engine!r}")
        if (args.reconcile_engine == "athena") != (args.catalog_grants is not None):
            raise ValueError("the athena reconcile engine needs the audit catalog's grants, and only it")
        if args.backup_role_arn is None:
            raise ValueError("the restore drill needs the backup role it passes to AWS Backup (TableBackups.role_arn)")

        cluster, capacity = self._cluster()
        execution_role, task_roles, task_definitions = self._task_definitions()
        schedules, dlq = self._schedules(cluster, capacity, execution_role, task_roles, task_definitions)
        self._alarms(cluster, task_definitions, dlq)

        self.cluster_arn = cluster.arn
        self.cluster_name = cluster.name
        self.task_definition_arns = {job: td.arn for job, td in task_definitions.items()}
        self.task_role_arns = {job: r.arn for job, r in task_roles.items()}
        self.execution_role_arn = execution_role.arn
        self.schedule_names = [s.name for s in schedules]
        self.dead_letter_queue_url = dlq.url
        self.register_outputs(
            {
                "cluster_arn": self.cluster_arn,
                "task_definition_arns": self.task_definition_arns,
                "task_role_arns": self.task_role_arns,
                "execution_role_arn": self.execution_role_arn,
                "repository_url": self.repository_url,
                "schedule_names": self.schedule_names,
                "dead_letter_queue_url": self.dead_letter_queue_url,
            }
        )

    # --- groups of children --------------------------------------------------------------
    def _cluster(self) -> tuple[aws.ecs.Cluster, aws.ecs.ClusterCapacityProviders]:
        """The cluster and its capacity providers (Fargate, optionally Spot by default)."""
        cluster = aws.ecs.Cluster(
            f"{self._name}-cluster",
            name=f"{self._prefix}-jobs",
            settings=[aws.ecs.ClusterSettingArgs(name="containerInsights", value="enabled")],
            tags=self._args.tags,
            opts=child(self),
        )
        capacity = aws.ecs.ClusterCapacityProviders(
            f"{self._name}-capacity",
            cluster_name=cluster.name,
            capacity_providers=["FARGATE", "FARGATE_SPOT"],
            default_capacity_provider_strategies=[
                aws.ecs.ClusterCapacityProvidersDefaultCapacityProviderStrategyArgs(
                    capacity_provider=self._capacity_provider(), weight=1, base=0
                )
            ],
            opts=child(self),
        )
        return cluster, capacity

    def _task_definitions(
        self,
    ) -> tuple[aws.iam.Role, dict[str, aws.iam.Role], dict[str, aws.ecs.TaskDefinition]]:
        """One log group, task role and task definition per job; one execution role for all."""
        args, name = self._args, self._name
        image, repository_arn = self._image()
        log_groups = {
            job: aws.cloudwatch.LogGroup(
                f"{name}-{job}-logs",
                name=f"/{layout.APP}/{args.stage}/{job}",
                retention_in_days=args.log_retention_days,
                kms_key_id=args.kms_key_arn,
                tags=args.tags,
                opts=child(self),
            )
            for job in JOBS
        }
        execution_role = self._role("execution", "ecs-tasks.amazonaws.com")
        aws.iam.RolePolicy(
            f"{name}-execution-policy",
            role=execution_role.id,
            policy=json_document(
                policies.execution_role_policy,
                log_group_arns=[g.arn for g in log_groups.values()],
                key_arn=args.kms_key_arn,
                repository_arn=repository_arn,
            ),
            opts=child(self),
        )
        task_roles = {job: self._task_role(job) for job in JOBS}
        task_definitions = {
            job: self._task_definition(job, image, log_groups[job], execution_role, task_roles[job]) for job in JOBS
        }
        return execution_role, task_roles, task_definitions

    def _task_role(self, job: str) -> aws.iam.Role:
        """The task's role, with the policy the registry names, made of the Outputs it takes."""
        builder = policy_builder(TASKS[job].policy)
        role = self._role(f"{job}-task", "ecs-tasks.amazonaws.com")
        aws.iam.RolePolicy(
            f"{self._name}-{job}-task-policy",
            role=role.id,
            policy=json_document(builder, **builder_inputs(builder, self._policy_inputs())),
            opts=child(self),
        )
        return role

    def _policy_inputs(self) -> dict[str, Any]:
        """Every input a task policy builder may take; each builder gets the ones it names."""
        args = self._args
        inputs: dict[str, Any] = {
            "table_arn": args.table_arn,
            "index_arn": args.index_arn,
            "raw_bucket_arn": args.bucket_arns["raw"],
            "processed_bucket_arn": args.bucket_arns["processed"],
            "reports_bucket_arn": args.bucket_arns["reports"],
            "key_arn": args.kms_key_arn,
            "arrivals_queue_arn": args.arrivals_queue_arn,
            "arrivals_dead_letter_queue_arn": args.arrivals_dead_letter_queue_arn,
            "reports_topic_arn": args.alarm_topic_arn,
            "metrics_namespace": namespace(args.stage),  # the runs' metrics (jobs.observability)
            "audit_bucket_arn": args.bucket_arns[layout.AUDIT_DATA],
            "textract": args.ocr_engine == OcrEngine.TEXTRACT,
            "region": args.region,
            "account_id": args.account_id,
            "backup_role_arn": args.backup_role_arn,
            # The Athena engine's table exports are a drill's restore source too.
            "exports_bucket_arn": args.bucket_arns.get(layout.AUDIT_DATA),
        }
        if args.catalog_grants is not None:
            inputs["catalog"] = args.catalog_grants
        if args.reconcile_engine == "polars" and layout.AUDIT_LOG in args.bucket_arns:
            # The polars nightly checks the change log (--audit-log): it reads it.
            inputs["audit_log_bucket_arn"] = args.bucket_arns[layout.AUDIT_LOG]
        return inputs

    def _task_definition(
        self,
        job: str,
        image: pulumi.Output[str],
        log_group: aws.cloudwatch.LogGroup,
        execution_role: aws.iam.Role,
        role: aws.iam.Role,
    ) -> aws.ecs.TaskDefinition:
        args = self._args
        size = args.sizes.get(job) or JobSize(TASKS[job].size.cpu, TASKS[job].size.memory)
        return aws.ecs.TaskDefinition(
            f"{self._name}-{job}",
            family=f"{self._prefix}-{job}",
            requires_compatibilities=["FARGATE"],
            network_mode="awsvpc",
            cpu=str(size.cpu),
            memory=str(size.memory),
            runtime_platform=aws.ecs.TaskDefinitionRuntimePlatformArgs(
                operating_system_family="LINUX", cpu_architecture="X86_64"
            ),
            execution_role_arn=execution_role.arn,
            task_role_arn=role.arn,
            volumes=[aws.ecs.TaskDefinitionVolumeArgs(name=SCRATCH_VOLUME)],
            container_definitions=self._containers(job, image, log_group),
            tags=args.tags,
            opts=child(self),
        )

    def _containers(
        self, job: str, image: pulumi.Output[str], log_group: aws.cloudwatch.LogGroup
    ) -> pulumi.Output[str]:
        """The task's containerDefinitions, once the Outputs they name resolve."""
        args = self._args
        return pulumi.Output.all(
            image=image,
            log_group=log_group.name,
            environment=args.job_environment,
            table_arn=args.table_arn,
            reports_topic_arn=args.alarm_topic_arn,
            signing_key_arn=args.report_signing_key_arn,
        ).apply(
            partial(
                _container_definitions,
                job=job,
                region=args.region,
                ocr_engine=args.ocr_engine if job == "ingest" else None,
                textract_max_pages=args.textract_max_pages if job == "ingest" else 0,
                drain_minutes=args.drain_minutes if job == "ingest" else None,
                textract_fallback=args.textract_fallback if job == "ingest" else False,
                schedule_timezone=args.schedule_timezone,
                reconcile_engine=args.reconcile_engine,
                chain={
                    ENV_REANCHOR_DAYS: args.reanchor_days,
                    ENV_CATCH_UP_DAYS: args.catch_up_days,
                    ENV_TABLE_STATE_DAYS: args.table_state_days,
                },
                holdings=args.holdings if job == "erasure" else None,
            )
        )

    def _schedules(
        self,
        cluster: aws.ecs.Cluster,
        capacity: aws.ecs.ClusterCapacityProviders,
        execution_role: aws.iam.Role,
        task_roles: Mapping[str, aws.iam.Role],
        task_definitions: Mapping[str, aws.ecs.TaskDefinition],
    ) -> tuple[list[aws.scheduler.Schedule], aws.sqs.Queue]:
        """The nightly schedules, their role and the dead-letter queue of undeliverable starts.

        The scheduler may start, and pass the roles of, only the task definitions it schedules.
        """
        args, name = self._args, self._name
        scheduled = scheduled_tasks(args)
        dlq = encrypted_queue(self, f"{name}-schedule-dlq", args.kms_key_arn, args.tags)
        group = aws.scheduler.ScheduleGroup(
            f"{name}-schedules", name=f"{self._prefix}-jobs", tags=args.tags, opts=child(self)
        )
        scheduler_role, scheduler_policy = self._scheduler_role(
            cluster, execution_role, task_roles, task_definitions, list(scheduled), dlq, group
        )
        target = partial(
            self._schedule,
            group=group,
            cluster=cluster,
            role=scheduler_role,
            dlq=dlq,
            depends_on=[scheduler_policy, capacity],
        )
        schedules = [
            target(
                when.name,
                f"{self._prefix}-{when.name}",
                getattr(args, when.setting),
                task_definitions[job],
                task_count=getattr(args, when.task_count) if when.task_count else 1,
            )
            for job, when in scheduled.items()
        ]
        return schedules, dlq

    def _scheduler_role(
        self,
        cluster: aws.ecs.Cluster,
        execution_role: aws.iam.Role,
        task_roles: Mapping[str, aws.iam.Role],
        task_definitions: Mapping[str, aws.ecs.TaskDefinition],
        scheduled: Sequence[str],
        dlq: aws.sqs.Queue,
        group: aws.scheduler.ScheduleGroup,
    ) -> tuple[aws.iam.Role, aws.iam.RolePolicy]:
        """The scheduler's role and its policy, scoped to the `scheduled` jobs."""
        args, name = self._args, self._name
        scheduler_role = self._role("scheduler", "scheduler.amazonaws.com")
        scheduler_policy = aws.iam.RolePolicy(
            f"{name}-scheduler-policy",
            role=scheduler_role.id,
            policy=json_document(
                policies.scheduler_role_policy,
                cluster_arn=cluster.arn,
                task_definition_arns=[task_definitions[job].arn for job in scheduled],
                pass_role_arns=[execution_role.arn, *(task_roles[job].arn for job in scheduled)],
                dead_letter_queue_arn=dlq.arn,
                key_arn=args.kms_key_arn,
                schedule_arns=pulumi.Output.all(account=args.account_id, group=group.name).apply(
                    lambda v: policies.schedule_arn_pattern(args.region, v["account"], v["group"])
                ),
            ),
            opts=child(self),
        )
        return scheduler_role, scheduler_policy

    def _alarms(
        self,
        cluster: aws.ecs.Cluster,
        task_definitions: Mapping[str, aws.ecs.TaskDefinition],
        dlq: aws.sqs.Queue,
    ) -> None:
        """Undeliverable schedule starts and failed job tasks go to the alert topic."""
        args, name = self._args, self._name
        queue_depth_alarm(self, f"{name}-schedule-dlq-alarm", dlq.name, args.alarm_topic_arn, "job schedule", args.tags)
        rule = aws.cloudwatch.EventRule(
            f"{name}-failed-tasks",
            description="DocuFlow job task stopped with a non-zero exit code or failed to start",
            event_pattern=json_document(
                failed_task_pattern,
                cluster_arn=cluster.arn,
                task_definition_arns=[td.arn for td in task_definitions.values()],
            ),
            tags=args.tags,
            opts=child(self),
        )
        # Reshaped for a phone: the job, what its exit code means, where its logs and reports are.
        message = failed_task_alert(args.stage, args.bucket_arns["reports"])
        alert_target(self, f"{name}-failed-tasks-alert", rule, args.alarm_topic_arn, message)

    # --- helpers ---------------------------------------------------------------------------
    def _image(self) -> tuple[pulumi.Output[str], pulumi.Input[str] | None]:
        """The job image by digest: in a configured repository, else in the stack's own."""
        args = self._args
        if args.image_repository:
            self.repository_url = None
            image = f"{args.image_repository}@{args.image_digest}"
            return pulumi.Output.from_input(image), policies.ecr_repository_arn(image)
        repository = aws.ecr.Repository(
            f"{self._name}-repository",
            name=f"{layout.stage_prefix(args.stage)}-jobs",
            image_tag_mutability="IMMUTABLE",
            image_scanning_configuration=aws.ecr.RepositoryImageScanningConfigurationArgs(scan_on_push=True),
            encryption_configurations=[
                aws.ecr.RepositoryEncryptionConfigurationArgs(encryption_type="KMS", kms_key=args.kms_key_arn)
            ],
            tags=args.tags,
            opts=child(self),
        )
        lifecycle = policies.ecr_lifecycle_policy(
            args.image_keep_count, args.image_release_tag_prefixes, deployed_tag=args.image_tag
        )
        aws.ecr.LifecyclePolicy(
            f"{self._name}-repository-lifecycle",
            repository=repository.name,
            policy=json.dumps(lifecycle),
            opts=child(self),
        )
        self.repository_url = repository.repository_url
        pinned = repository.repository_url.apply(lambda url: f"{url}@{args.image_digest}")
        tag = args.image_tag
        if tag is not None and not pulumi.runtime.is_dry_run():
            # At `up` only: a preview makes no registry call (docs/deploy.md). The task
            # definitions wait for the check, so a digest the tag does not name is never deployed.
            listed = aws.ecr.get_images_output(repository_name=repository.name, opts=pulumi.InvokeOptions(parent=self))

            def checked(got: list[Any]) -> str:
                # Each a GetImagesImageIdResult: a dict by its Python names (an untagged image has no tag).
                check_tagged_digest([(i.get("image_tag"), i["image_digest"]) for i in got[1]], tag, args.image_digest)
                return str(got[0])

            pinned = pulumi.Output.all(pinned, listed.image_ids).apply(checked)
        return pinned, repository.arn

    def _role(self, purpose: str, service: str) -> aws.iam.Role:
        return aws.iam.Role(
            f"{self._name}-{purpose}-role",
            assume_role_policy=json_document(
                policies.assume_role_policy, service=service, account_id=self._args.account_id
            ),
            tags=self._args.tags,
            opts=child(self),
        )

    def _capacity_provider(self) -> str:
        # Spot is interruptible: a stopped shard is picked up by the next night's sweep, which
        # is idempotent, so the saving is worth it where the stack opts in.
        return "FARGATE_SPOT" if self._args.fargate_spot else "FARGATE"

    def _ecs_parameters(
        self, task_definition: aws.ecs.TaskDefinition, task_count: int
    ) -> aws.scheduler.ScheduleTargetEcsParametersArgs:
        args = self._args
        placement: dict[str, Any] = (
            {
                "capacity_provider_strategies": [
                    aws.scheduler.ScheduleTargetEcsParametersCapacityProviderStrategyArgs(
                        capacity_provider=self._capacity_provider(), weight=1, base=0
                    )
                ]
            }
            if args.fargate_spot
            else {"launch_type": "FARGATE"}
        )
        return aws.scheduler.ScheduleTargetEcsParametersArgs(
            task_definition_arn=task_definition.arn,
            task_count=task_count,
            platform_version="LATEST",
            # A task started by the scheduler carries no tags of its own: without these its
            # Fargate hours are untagged spend, which the stage's cost budget never sees.
            propagate_tags="TASK_DEFINITION",
            enable_ecs_managed_tags=True,
            tags=args.tags,
            network_configuration=aws.scheduler.ScheduleTargetEcsParametersNetworkConfigurationArgs(
                subnets=list(args.subnet_ids),
                security_groups=list(args.security_group_ids),
                assign_public_ip=args.assign_public_ip,
            ),
            **placement,
        )

    def _schedule(
        self,
        suffix: str,
        schedule_name: str,
        expression: str,
        task_definition: aws.ecs.TaskDefinition,
        *,
        group: aws.scheduler.ScheduleGroup,
        cluster: aws.ecs.Cluster,
        role: aws.iam.Role,
        dlq: aws.sqs.Queue,
        task_count: int,
        depends_on: list[pulumi.Resource],
    ) -> aws.scheduler.Schedule:
        args = self._args
        return aws.scheduler.Schedule(
            f"{self._name}-{suffix}",
            name=schedule_name,
            group_name=group.name,
            schedule_expression=expression,
            schedule_expression_timezone=args.schedule_timezone,
            # The payload (the target input) is encrypted with the stack's key, like every other
            # resource that stores data; the scheduler role may decrypt it (DecryptSchedules).
            kms_key_arn=args.kms_key_arn,
            flexible_time_window=aws.scheduler.ScheduleFlexibleTimeWindowArgs(mode="OFF"),
            target=aws.scheduler.ScheduleTargetArgs(
                arn=cluster.arn,
                role_arn=role.arn,
                # The scheduled time, as the job's DOCUFLOW_SCHEDULED_TIME (scheduled_input).
                input=scheduled_input(),
                ecs_parameters=self._ecs_parameters(task_definition, task_count),
                retry_policy=aws.scheduler.ScheduleTargetRetryPolicyArgs(
                    maximum_retry_attempts=args.retry_attempts,
                    maximum_event_age_in_seconds=args.max_event_age_seconds,
                ),
                dead_letter_config=aws.scheduler.ScheduleTargetDeadLetterConfigArgs(arn=dlq.arn),
            ),
            opts=child(self, depends_on=depends_on),
        )


def check_tagged_digest(images: Sequence[tuple[str | None, str]], tag: str, digest: str) -> None:
    """Refuse a deploy whose imageDigest is not the image its imageTag names in the stack's
    repository (ValueError, which fails `up` before a task definition takes it). An empty
    repository passes: the stack's first `up` runs before the first push (docs/deploy.md).
    """
    if not images:
        return
    named = {d for t, d in images if t == tag}
    if not named:
        raise ValueError(f"docuflow:imageTag {tag!r} names no image in the stack's repository: push it first")
    if digest not in named:
        raise ValueError(
            f"docuflow:imageTag {tag!r} is {', '.join(sorted(named))}, not docuflow:imageDigest {digest}: "
            "set the digest the push printed"
        )
