"""The DocuFlow Pulumi program: stack settings → components → exports.

`build()` lists the components in the order they depend on each other; each is built by a small
function of the validated settings and the components it needs.

The only reader of the stack config, which it reads whole (engine_config). `build()` is
importable so the unit tests run the very same program under Pulumi's mocks.
"""

from __future__ import annotations

from collections.abc import Callable

import pulumi
import pulumi_aws as aws

from components.alerts import Alerts, AlertsArgs
from components.arrivals import Arrivals, ArrivalsArgs
from components.audit_catalog import AuditCatalog, AuditCatalogArgs
from components.audit_trail import AuditTrail, AuditTrailArgs, audit_bucket_policies, trail_arn
from components.backups import TableBackups, TableBackupsArgs
from components.batch_jobs import RECONCILE_JOBS, BatchJobs, BatchJobsArgs, JobResources
from components.budget import CostBudget, CostBudgetArgs
from components.document_buckets import DocumentBuckets, DocumentBucketsArgs, bucket_arn
from components.document_store import DocumentStore, DocumentStoreArgs
from components.encryption import DataKey, DataKeyArgs
from components.job_image import JobImage
from components.job_schedules import JobNetwork, JobSchedules
from components.operations import Operations, OperationsArgs
from components.replication import SecondRegion, SecondRegionArgs
from components.report_signing import ReportSigningKey, ReportSigningKeyArgs
from components.review_api import ReviewApi, ReviewApiArgs
from components.settings import StackSettings
from components.status_events import StatusEvents, StatusEventsArgs
from jobs import registry
from jobs.contract import BucketSpec, layout
from jobs.contract.alarms import AlarmInputs
from jobs.ingest import job as ingest_job
from jobs.runtime.registry import TaskSize
from jobs.settings import JobSettings


def engine_config() -> dict[str, str]:
    """Every config key the engine handed the program, as the SDK's getter resolves it.

    The language host passes the whole stack config (project defaults merged in) as the
    PULUMI_CONFIG bag; tests and inline programs set it with set_all_config. Both are read whole,
    so a key no setting reads is seen (and refused) rather than ignored. Each value then comes
    from pulumi.runtime.get_config, whose precedence (PULUMI_CONFIG_<KEY> over the bag) wins.
    """
    handed = {**pulumi.runtime.get_config_env(), **pulumi.runtime.config.CONFIG.get()}
    keys = sorted(set(handed) | set(StackSettings.keys()))
    return {key: value for key in keys if (value := pulumi.runtime.get_config(key)) is not None}


def load_settings() -> StackSettings:
    return StackSettings.from_mapping(engine_config())


def build(settings: StackSettings) -> dict[str, pulumi.Input[object]]:
    """Create every component for `settings`; returns the stack outputs."""
    account_id = aws.get_caller_identity_output().account_id
    key = data_key(settings, account_id)
    alerts = alert_topic(settings, account_id, key)
    buckets = document_buckets(settings, account_id, key)
    second = second_region(settings, account_id, key, buckets, alerts)
    store = document_store(settings, key, second)
    backups = table_backups(settings, account_id, store, key, second, alerts)
    events = status_events(settings, account_id, store, key, alerts)
    arrivals = arrivals_queue(settings, account_id, buckets, key, alerts)
    catalog = audit_catalog(settings, account_id, buckets, key)
    trail = audit_trail(settings, account_id, store, key, buckets, alerts)
    job_env = job_environment(settings, arrivals)
    review = review_api(settings, account_id, store, buckets, key, job_env)
    # The reconcile tasks name the signing key by its ARN, and the key's policy names their roles:
    # the ARN is handed to the task definitions once the key (made after the roles) exists.
    deferred: tuple[pulumi.Output[str], Callable[[pulumi.Output[str]], None]] = pulumi.deferred_output()
    signing_key_arn, resolve_signing_key_arn = deferred
    jobs = batch_jobs(
        settings, account_id, key, store, buckets, arrivals, alerts, job_env, catalog, backups, signing_key_arn
    )
    outputs = stack_outputs(store, buckets, key, alerts, jobs, arrivals, events, review, trail)
    outputs |= recovery_outputs(settings, jobs, backups, second)
    budget = cost_budget(settings, alerts)
    outputs["budgetName"] = budget.budget_name
    outputs["textractBudgetName"] = budget.textract_budget_name
    outputs["dashboardName"] = operations(settings, alerts).dashboard_name
    signing = report_signing(settings, account_id, jobs)
    resolve_signing_key_arn(signing.key_arn)
    outputs["reportSigningKeyArn"] = signing.key_arn
    outputs["auditDataBucketName"] = buckets.bucket_names[layout.AUDIT_DATA]
    if catalog.database_name is not None and catalog.workgroup_name is not None:
        outputs |= {"auditDatabaseName": catalog.database_name, "athenaWorkgroupName": catalog.workgroup_name}
    return outputs


def report_signing(settings: StackSettings, account_id: pulumi.Output[str], jobs: BatchJobs) -> ReportSigningKey:
    """The key that signs the reconcile reports: the reconcile and repair task roles may sign."""
    return ReportSigningKey(
        f"{layout.stage_prefix(settings.stage)}-report-signing",
        ReportSigningKeyArgs(
            account_id=account_id,
            stage=settings.stage,
            signer_role_arns=[jobs.task_role_arns[job] for job in RECONCILE_JOBS],
            protect=settings.protect,
            tags=settings.resource_tags(),
        ),
    )


def bucket_specs(settings: StackSettings) -> list[BucketSpec]:
    """The data buckets and the audit trail's."""
    return settings.buckets() + settings.audit_buckets()


def bucket_names(settings: StackSettings) -> dict[str, str]:
    """Purpose → bucket name, of every bucket in bucket_specs."""
    return {spec.purpose: spec.name for spec in bucket_specs(settings)}


def inventoried_purposes() -> list[str]:
    """The buckets S3 Inventory reports on: the nightly reconcile judges both data buckets' daily
    reports (either engine).
    """
    return list(layout.GLUE_INVENTORY_TABLES)


def data_key(settings: StackSettings, account_id: pulumi.Output[str]) -> DataKey:
    """The stack's KMS key, which encrypts the table, the buckets, the queues and the logs."""
    prefix = layout.stage_prefix(settings.stage)
    names = bucket_names(settings)
    return DataKey(
        prefix,
        DataKeyArgs(
            account_id=account_id,
            region=settings.region,
            alias=f"{prefix}-data",
            notifying_bucket_arns=[bucket_arn(names["raw"])],
            # S3 Inventory encrypts its reports of these buckets with the key.
            inventoried_bucket_arns=[bucket_arn(names[p]) for p in inventoried_purposes()],
            trail_arn=trail_arn(settings.stage, settings.region, account_id),
            protect=settings.protect,
            tags=settings.resource_tags(),
        ),
    )


def document_buckets(settings: StackSettings, account_id: pulumi.Output[str], key: DataKey) -> DocumentBuckets:
    """The raw, processed and reports buckets, the audit trail's, and the access-log bucket."""
    return DocumentBuckets(
        layout.stage_prefix(settings.stage),
        DocumentBucketsArgs(
            specs=bucket_specs(settings),
            access_log_bucket_name=settings.access_log_bucket_name(),
            kms_key_arn=key.key_arn,
            account_id=account_id,
            break_glass_role_arn=settings.storage.break_glass_role_arn,
            policies=audit_bucket_policies(
                settings.stage, settings.region, account_id, settings.storage.break_glass_role_arn
            ),
            audit_data=settings.audit_data(),
            access_log_retention_days=settings.storage.access_log_retention_days,
            noncurrent_expiration_days=settings.storage.noncurrent_expiration_days,
            abort_multipart_days=settings.storage.abort_multipart_days,
            protect=settings.protect,
            tags=settings.resource_tags(),
        ),
    )


def document_store(settings: StackSettings, key: DataKey, second: SecondRegion | None) -> DocumentStore:
    """The documents table, replicated to the second region when there is one."""
    return DocumentStore(
        layout.stage_prefix(settings.stage),
        DocumentStoreArgs(
            spec=settings.table(),
            kms_key_arn=key.key_arn,
            protect=settings.protect,
            point_in_time_recovery_days=settings.recovery.pitr_recovery_days,
            replica_region=settings.recovery.replica_region,
            replica_kms_key_arn=second.key_arn if second else None,
            tags=settings.resource_tags(),
        ),
    )


def alert_topic(settings: StackSettings, account_id: pulumi.Output[str], key: DataKey) -> Alerts:
    """The topic every alarm goes to (the stack's own, or an existing one)."""
    return Alerts(
        layout.stage_prefix(settings.stage),
        AlertsArgs(
            account_id=account_id,
            kms_key_arn=key.key_arn,
            existing_topic_arn=settings.operations.alarm_topic_arn,
            email=settings.operations.alarm_email,
            tags=settings.resource_tags(),
        ),
    )


def operations(settings: StackSettings, alerts: Alerts) -> Operations:
    """The jobs' declared alarms on the alert topic and the stack's dashboard (docs/operations.md).
    The failed-ratio alarm takes the jobs' own threshold: the task environment does not change it.
    """
    return Operations(
        f"{layout.stage_prefix(settings.stage)}-operations",
        OperationsArgs(
            stage=settings.stage,
            region=settings.region,
            alarm_topic_arn=alerts.topic_arn,
            alarms=registry.declared_alarms(
                AlarmInputs(
                    failed_ratio_threshold=JobSettings().ingest.failed_ratio_threshold,
                    oldest_message_seconds=settings.operations.arrivals_max_age_seconds,
                    schedules=settings.scheduling.expressions(),
                    ingest_tasks=settings.ingest.ingest_tasks,
                )
            ),
            published=registry.published(),
            windows=settings.scheduling.job_windows(),
            tags=settings.resource_tags(),
        ),
    )


def cost_budget(settings: StackSettings, alerts: Alerts) -> CostBudget:
    """The stack's monthly cost budget, alerting the alarm topic."""
    return CostBudget(
        f"{layout.stage_prefix(settings.stage)}-cost",
        CostBudgetArgs(
            stage=settings.stage,
            amount_usd=settings.operations.monthly_budget_usd,
            textract_amount_usd=settings.operations.textract_budget,
            alarm_topic_arn=alerts.topic_arn,
            tags=settings.resource_tags(),
        ),
    )


def status_events(
    settings: StackSettings, account_id: pulumi.Output[str], store: DocumentStore, key: DataKey, alerts: Alerts
) -> StatusEvents:
    """The table's status changes, piped from its stream into a queue."""
    return StatusEvents(
        f"{layout.stage_prefix(settings.stage)}-status",
        StatusEventsArgs(
            stream_arn=store.stream_arn,
            kms_key_arn=key.key_arn,
            account_id=account_id,
            alarm_topic_arn=alerts.topic_arn,
            tags=settings.resource_tags(),
        ),
    )


def arrivals_queue(
    settings: StackSettings, account_id: pulumi.Output[str], buckets: DocumentBuckets, key: DataKey, alerts: Alerts
) -> Arrivals:
    """The queue of the raw bucket's new objects, which the ingest drains."""
    return Arrivals(
        f"{layout.stage_prefix(settings.stage)}-arrivals",
        ArrivalsArgs(
            spec=settings.arrivals(),
            raw_bucket_name=buckets.bucket_names["raw"],
            raw_bucket_arn=buckets.bucket_arns["raw"],
            account_id=account_id,
            kms_key_arn=key.key_arn,
            alarm_topic_arn=alerts.topic_arn,
            tags=settings.resource_tags(),
        ),
    )


def audit_catalog(
    settings: StackSettings, account_id: pulumi.Output[str], buckets: DocumentBuckets, key: DataKey
) -> AuditCatalog:
    """The daily inventories the nightly reconcile reads (either engine); with the Athena engine
    also the Glue catalog of inventories, exports and the Iceberg table, and the workgroup.
    """
    names = bucket_names(settings)
    return AuditCatalog(
        f"{layout.stage_prefix(settings.stage)}-audit",
        AuditCatalogArgs(
            stage=settings.stage,
            region=settings.region,
            account_id=account_id,
            source_buckets={p: names[p] for p in inventoried_purposes()},
            audit_bucket_name=settings.audit_data().name,
            audit_bucket_arn=buckets.bucket_arns[layout.AUDIT_DATA],
            reports_bucket_name=names["reports"],
            kms_key_arn=key.key_arn,
            bytes_scanned_cutoff=settings.reconcile.athena_bytes_scanned_cutoff,
            athena=settings.reconcile.reconcile_engine == "athena",
            tags=settings.resource_tags(),
        ),
    )


def audit_trail(
    settings: StackSettings,
    account_id: pulumi.Output[str],
    store: DocumentStore,
    key: DataKey,
    buckets: DocumentBuckets,
    alerts: Alerts,
) -> AuditTrail:
    """The table's change log and the buckets' access trail, queryable in Athena."""
    return AuditTrail(
        f"{layout.stage_prefix(settings.stage)}-audit-trail",
        AuditTrailArgs(
            stage=settings.stage,
            region=settings.region,
            account_id=account_id,
            stream_arn=store.stream_arn,
            kms_key_arn=key.key_arn,
            bucket_names=bucket_names(settings),
            alarm_topic_arn=alerts.topic_arn,
            bytes_scanned_cutoff=settings.reconcile.athena_bytes_scanned_cutoff,
            log_retention_days=settings.tasks.log_retention_days,
            buckets=buckets,
            tags=settings.resource_tags(),
        ),
    )


def job_environment(settings: StackSettings, arrivals: Arrivals) -> pulumi.Output[dict[str, str]]:
    """The jobs' environment (JobSettings.env()), once the arrival queue's URL is known."""
    table = settings.table()
    names = bucket_names(settings)
    return arrivals.queue_url.apply(
        lambda url: JobSettings(stage=settings.stage)
        .changed(
            table_name=table.name,
            index_name=table.index_name,
            raw_bucket=names["raw"],
            processed_bucket=names["processed"],
            reports_bucket=names["reports"],
            arrivals_queue_url=url,
            review_lease_seconds=settings.review.review_lease_seconds,
            result_url_seconds=settings.review.result_url_seconds,
            retention=settings.storage.retention(),
        )
        .env()
    )


def review_api(
    settings: StackSettings,
    account_id: pulumi.Output[str],
    store: DocumentStore,
    buckets: DocumentBuckets,
    key: DataKey,
    job_env: pulumi.Output[dict[str, str]],
) -> ReviewApi:
    """The review API's role and settings."""
    return ReviewApi(
        f"{layout.stage_prefix(settings.stage)}-review-api",
        ReviewApiArgs(
            account_id=account_id,
            table_arn=store.table_arn,
            processed_bucket_arn=buckets.bucket_arns["processed"],
            kms_key_arn=key.key_arn,
            environment=job_env,
            tags=settings.resource_tags(),
        ),
    )


def batch_jobs(
    settings: StackSettings,
    account_id: pulumi.Output[str],
    key: DataKey,
    store: DocumentStore,
    buckets: DocumentBuckets,
    arrivals: Arrivals,
    alerts: Alerts,
    job_env: pulumi.Output[dict[str, str]],
    catalog: AuditCatalog,
    backups: TableBackups,
    signing_key_arn: pulumi.Output[str],
) -> BatchJobs:
    """The ECS cluster, the job tasks and their schedules; the reconcile tasks sign with the key
    `signing_key_arn` names.
    """
    return BatchJobs(
        layout.stage_prefix(settings.stage),
        BatchJobsArgs(
            stage=settings.stage,
            region=settings.region,
            account_id=account_id,
            resources=JobResources(
                kms_key_arn=key.key_arn,
                table_arn=store.table_arn,
                index_arn=store.index_arn,
                bucket_arns=buckets.bucket_arns,
                arrivals_queue_arn=arrivals.queue_arn,
                arrivals_dead_letter_queue_arn=arrivals.dead_letter_queue_arn,
                alarm_topic_arn=alerts.topic_arn,
                backup_role_arn=backups.role_arn,
                catalog_grants=catalog.grants,
                report_signing_key_arn=signing_key_arn,
            ),
            job_environment=job_env,
            network=JobNetwork(
                subnet_ids=settings.tasks.subnet_ids,
                security_group_ids=settings.tasks.security_group_ids,
                assign_public_ip=settings.tasks.assign_public_ip,
                fargate_spot=settings.tasks.fargate_spot,
            ),
            image=job_image(settings),
            schedules=job_schedules(settings),
            sizes=job_sizes(settings),
            # The drain stops taking work in time for the reconcile (components.schedules).
            drain_minutes=settings.scheduling.drain_minutes,
            ocr_engine=settings.ingest.ocr_engine,
            textract_max_pages=settings.ingest.textract_max_pages_per_night,
            textract_fallback=settings.ingest.second_opinion,
            reconcile_engine=settings.reconcile.reconcile_engine,
            reanchor_days=settings.reconcile.reconcile_reanchor_days,
            catch_up_days=settings.reconcile.reconcile_catch_up_days,
            table_state_days=settings.reconcile.table_state_retention_days,
            holdings=settings.holdings(),
            log_retention_days=settings.tasks.log_retention_days,
            tags=settings.resource_tags(),
        ),
    )


def job_image(settings: StackSettings) -> JobImage:
    """The job image: its digest, the repository and what its lifecycle keeps."""
    image = settings.image
    return JobImage(
        digest=image.image_digest,
        repository=image.repository(),
        keep_count=image.image_keep_count,
        release_tag_prefixes=image.image_release_tag_prefixes,
        tag=image.image_tag,
    )


def job_schedules(settings: StackSettings) -> JobSchedules:
    """The schedules by task: each scheduled task's cron (the stack's docuflow:schedules by the
    schedule's name, in the stack's zone), which of the tasks sharing the nightly reconcile's
    schedule runs, how many ingest tasks a start runs, retries.
    """
    scheduling, crons = settings.scheduling, settings.scheduling.expressions()
    scheduled = {name: task.schedule for name, (_, task) in registry.tasks().items() if task.schedule is not None}
    nightly_repair = settings.reconcile.nightly_repair
    return JobSchedules(
        expressions={name: crons[schedule.name] for name, schedule in scheduled.items() if schedule.name in crons},
        # The nightly reconcile repairs what it safely can (the repair task) or only reports it:
        # the task declared as started (`enabled`) is the repair.
        enabled={name: scheduled[name].enabled is nightly_repair for name in RECONCILE_JOBS if name in scheduled},
        task_counts={task.name: settings.ingest.ingest_tasks for task in ingest_job.JOB.tasks},
        timezone=scheduling.schedule_timezone,
        retry_attempts=scheduling.schedule_retry_attempts,
        max_event_age_seconds=scheduling.schedule_max_event_age_seconds,
    )


def job_sizes(settings: StackSettings) -> dict[str, TaskSize]:
    """Each task's size by its registry name: the stack's (docuflow:taskSizes), else the registry's."""
    return {name: TaskSize(size.cpu, size.memory) for name, size in settings.tasks.sizes().items()}


def stack_outputs(
    store: DocumentStore,
    buckets: DocumentBuckets,
    key: DataKey,
    alerts: Alerts,
    jobs: BatchJobs,
    arrivals: Arrivals,
    events: StatusEvents,
    review: ReviewApi,
    trail: AuditTrail,
) -> dict[str, pulumi.Input[object]]:
    """The names and ARNs the jobs, the operators and the other stacks read."""
    return {
        "tableName": store.table_name,
        "tableArn": store.table_arn,
        "tableStreamArn": store.stream_arn,
        "statusIndexName": store.index_name,
        "rawBucketName": buckets.bucket_names["raw"],
        "processedBucketName": buckets.bucket_names["processed"],
        "reportsBucketName": buckets.bucket_names["reports"],
        "accessLogBucketName": buckets.access_log_bucket_name,
        "dataKeyArn": key.key_arn,
        "alarmTopicArn": alerts.topic_arn,
        "clusterArn": jobs.cluster_arn,
        **jobs.task_definition_exports(),
        "jobRepositoryUrl": jobs.repository_url,
        "scheduleNames": jobs.schedule_names,
        "arrivalsQueueUrl": arrivals.queue_url,
        "arrivalsDeadLetterQueueUrl": arrivals.dead_letter_queue_url,
        "statusEventsQueueUrl": events.queue_url,
        "statusEventsDeadLetterQueueUrl": events.dead_letter_queue_url,
        "scheduleDeadLetterQueueUrl": jobs.dead_letter_queue_url,
        "reviewApiRoleArn": review.role_arn,
        "auditLogBucketName": buckets.bucket_names[layout.AUDIT_LOG],
        "accessTrailBucketName": buckets.bucket_names[layout.ACCESS_TRAIL],
        "auditDeliveryStreamName": trail.delivery_stream_name,
        "accessTrailArn": trail.trail_arn,
        "trailDatabaseName": trail.database_name,
        "auditWorkgroupName": trail.workgroup_name,
        "auditReaderPolicyArn": trail.reader_policy_arn,
    }


def second_region(
    settings: StackSettings, account_id: pulumi.Output[str], key: DataKey, buckets: DocumentBuckets, alerts: Alerts
) -> SecondRegion | None:
    """The replica key and buckets in the stack's second region, the replication into them, and
    the alarms on its latency.
    """
    replica_region = settings.recovery.replica_region
    if replica_region is None:
        return None
    return SecondRegion(
        f"{layout.stage_prefix(settings.stage)}-second",
        SecondRegionArgs(
            stage=settings.stage,
            region=settings.region,
            replica_region=replica_region,
            account_id=account_id,
            source_key_arn=key.key_arn,
            source_specs=settings.buckets(),
            source_buckets=buckets,
            break_glass_role_arn=settings.storage.break_glass_role_arn,
            access_log_retention_days=settings.storage.access_log_retention_days,
            noncurrent_expiration_days=settings.storage.noncurrent_expiration_days,
            abort_multipart_days=settings.storage.abort_multipart_days,
            alarm_topic_arn=alerts.topic_arn,
            latency_alarm_seconds=settings.operations.replication_latency_alarm_seconds,
            protect=settings.protect,
            tags=settings.resource_tags(),
        ),
    )


def table_backups(
    settings: StackSettings,
    account_id: pulumi.Output[str],
    store: DocumentStore,
    key: DataKey,
    second: SecondRegion | None,
    alerts: Alerts,
) -> TableBackups:
    """The daily and monthly AWS Backup of the table, copied to the second region when there is
    one; failed backup, copy and restore jobs on the alert topic.
    """
    return TableBackups(
        f"{layout.stage_prefix(settings.stage)}-backups",
        TableBackupsArgs(
            stage=settings.stage,
            region=settings.region,
            account_id=account_id,
            table_arn=store.table_arn,
            table_key_arn=key.key_arn,
            daily_schedule=settings.recovery.backup_daily_schedule,
            daily_retention_days=settings.recovery.backup_daily_retention_days,
            monthly_schedule=settings.recovery.backup_monthly_schedule,
            monthly_retention_days=settings.recovery.backup_monthly_retention_days,
            vault_lock=settings.recovery.backup_vault_lock,
            schedule_timezone=settings.scheduling.schedule_timezone,
            replica_region=settings.recovery.replica_region,
            replica_provider=second.provider if second else None,
            alarm_topic_arn=alerts.topic_arn,
            protect=settings.protect,
            tags=settings.resource_tags(),
        ),
    )


def recovery_outputs(
    settings: StackSettings, jobs: BatchJobs, backups: TableBackups, second: SecondRegion | None
) -> dict[str, pulumi.Input[object]]:
    outputs: dict[str, pulumi.Input[object]] = {
        "backupVaultName": backups.vault_name,
        "backupRoleArn": backups.role_arn,
        # What an erasure receipt quotes: how long erased data can survive in backups.
        "erasedDataHorizonDays": settings.recovery.erased_data_horizon_days,
    }
    if second:
        outputs |= {
            "replicaRegion": settings.recovery.replica_region,
            "copyVaultArn": backups.copy_vault_arn,
            **{f"{p}ReplicaBucketName": n for p, n in second.bucket_names.items() if p != "access-logs"},
        }
    return outputs


def main() -> None:
    for name, value in build(load_settings()).items():
        pulumi.export(name, value)


if __name__ == "__main__":
    main()
