"""The job settings: what every job reads from the environment, declared once and validated once, in
one section per concern (`settings.store`, `.ingest`, `.extraction`, `.reconcile`, `.review`,
`.audit`, `.run`) composed into JobSettings beside the stage. The botocore Config built from them is
jobs.store.clients.botocore_config: this package stays free of the AWS SDK.

Each setting is one field; its environment variable is derived from it (DOCUFLOW_ + the field's name
in capitals, or the alias it declares), and pydantic-settings reads it, so the ENV_* names,
JOB_ENV_VARS, `env()`/`env_of()` (what the task definitions set) and `from_env()` (what a job reads)
cannot drift apart; docs/deploy.md's table of job settings is generated from the same fields
(tests/jobs/test_job_settings.py keeps it in step).

Only `from_env` reads an environment, the one it is given (the process's by default): settings
built in code (`JobSettings(stage=…)`) never do. Two defaults follow from other variables in
`from_env` only (`FromEnvironment`); names left empty follow from the stage (`FromStage`).

The jobs reach AWS only through boto3's standard configuration: endpoints come from
AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_S3 when set (local stack), so no code path differs.
"""

from __future__ import annotations

from jobs.settings._base import ENV_PREFIX, FromEnvironment, FromStage, Section, env_text
from jobs.settings._job import (
    ENV_ARRIVALS_QUEUE_URL,
    ENV_AUDIT_BUCKET,
    ENV_CATCH_UP_DAYS,
    ENV_HOLDINGS,
    ENV_IMAGE_DIGEST,
    ENV_OCR_ENGINE,
    ENV_REANCHOR_DAYS,
    ENV_REPORT_SIGNING_KEY,
    ENV_REPORTS_TOPIC_ARN,
    ENV_STAGE,
    ENV_TABLE,
    ENV_TABLE_ARN,
    ENV_TABLE_STATE_DAYS,
    ENV_TEXTRACT_MAX_PAGES,
    ENV_WORKERS,
    JOB_ENV_VARS,
    JOB_SETTINGS,
    SETTINGS,
    JobSettings,
    env_name,
)
from jobs.settings._sections import (
    AuditSection,
    ExtractionChoices,
    ExtractionSection,
    IngestSection,
    ReconcileSection,
    ReviewSection,
    RunSection,
    StoreSection,
)

__all__ = [
    "ENV_ARRIVALS_QUEUE_URL",
    "ENV_AUDIT_BUCKET",
    "ENV_CATCH_UP_DAYS",
    "ENV_HOLDINGS",
    "ENV_IMAGE_DIGEST",
    "ENV_OCR_ENGINE",
    "ENV_PREFIX",
    "ENV_REANCHOR_DAYS",
    "ENV_REPORTS_TOPIC_ARN",
    "ENV_REPORT_SIGNING_KEY",
    "ENV_STAGE",
    "ENV_TABLE",
    "ENV_TABLE_ARN",
    "ENV_TABLE_STATE_DAYS",
    "ENV_TEXTRACT_MAX_PAGES",
    "ENV_WORKERS",
    "JOB_ENV_VARS",
    "JOB_SETTINGS",
    "SETTINGS",
    "AuditSection",
    "ExtractionChoices",
    "ExtractionSection",
    "FromEnvironment",
    "FromStage",
    "IngestSection",
    "JobSettings",
    "ReconcileSection",
    "ReviewSection",
    "RunSection",
    "Section",
    "StoreSection",
    "env_name",
    "env_text",
]
