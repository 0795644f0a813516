"""JobSettings: the stage and one section per concern, composed, read from one environment at once.

`from_env` reads every section from the environment it is given (pydantic-settings reads and
decodes, jobs.settings._base says where from) and names every bad value of every section at once,
by its variable. The whole fills the names its sections left empty from the stage (`FromStage`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Self

from pydantic import Field, model_validator
from pydantic.fields import FieldInfo

from jobs.errors import SettingsError
from jobs.settings._base import FromStage, Section, env_text, is_section, variable_of
from jobs.settings._sections import (
    AuditSection,
    ExtractionSection,
    IngestSection,
    ReconcileSection,
    ReviewSection,
    RunSection,
    StoreSection,
)


class JobSettings(Section):
    """Every job's settings: `settings.store.raw_bucket`, `settings.ingest.lease_seconds`, …."""

    stage: str = Field(
        default="dev",
        pattern=r"^[a-z][a-z0-9-]{0,20}$",
        description="The stack's stage: every name below left empty is derived from it.",
    )
    store: StoreSection = Field(default_factory=StoreSection)
    ingest: IngestSection = Field(default_factory=IngestSection)
    extraction: ExtractionSection = Field(default_factory=ExtractionSection)
    reconcile: ReconcileSection = Field(default_factory=ReconcileSection)
    review: ReviewSection = Field(default_factory=ReviewSection)
    audit: AuditSection = Field(default_factory=AuditSection)
    run: RunSection = Field(default_factory=RunSection)

    @model_validator(mode="after")
    def _names_from_stage(self) -> JobSettings:
        for name, section in self.sections().items():
            given = getattr(self, name)
            empty = {
                field: rule.name(self.stage) for field, rule in section.rules(FromStage) if not getattr(given, field)
            }
            if empty:  # frozen, and a section given may be shared: a copy of it
                object.__setattr__(self, name, given.model_copy(update=empty))
        return self

    @classmethod
    def sections(cls) -> dict[str, type[Section]]:
        """{attribute: section class}, in order."""
        return {name: f.annotation for name, f in cls.model_fields.items() if is_section(f)}  # type: ignore[misc]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        """The settings in `environ` (the process's by default); unset and empty variables take defaults.

        A bad value is a SettingsError naming its variable, the text it held and what is wrong.
        """
        env = os.environ if environ is None else environ
        problems: list[str] = []
        built = {name: section.read(env, problems) for name, section in cls.sections().items()}
        whole = cls.read(env, problems, **built)
        if problems:
            raise SettingsError(f"invalid job settings: {'; '.join(problems)}")
        return whole

    def check_endpoints(self, environ: Mapping[str, str] | None = None) -> None:
        """Refuse to send documents to the real Textract while S3 is an emulator on loopback.

        The process environment by default: it is where boto3 itself reads the endpoints.
        """
        env = os.environ if environ is None else environ
        if (
            self.extraction.ocr_engine == "textract"
            and env.get("AWS_ENDPOINT_URL_S3")
            and not env.get("AWS_ENDPOINT_URL_TEXTRACT")
        ):
            raise SettingsError(
                f"{ENV_OCR_ENGINE}=textract with a local S3 endpoint but no AWS_ENDPOINT_URL_TEXTRACT: "
                f"use {ENV_OCR_ENGINE}=local (or off) on the embedded stack"
            )

    def value(self, setting: str) -> object:
        """One setting's value by its name (as env_name names it)."""
        section = _SECTION_OF[setting]
        return getattr(self if section is None else getattr(self, section), setting)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """Pydantic's copy, refusing an update that names no field of JobSettings itself: a
        setting lives in its section, so `model_copy(update={"ocr_engine": ...})` would set an
        attribute nothing reads. A setting is changed by its name with `changed()`.
        """
        unknown = sorted(set(update or ()) - set(type(self).model_fields))
        if unknown:
            raise KeyError(f"{unknown} name no field of JobSettings: change a setting with changed(...)")
        return super().model_copy(update=update, deep=deep)

    def changed(self, **values: Any) -> Self:
        """These settings with some changed, by setting name, each checked as when built."""
        whole: dict[str, Any] = dict(self)
        changes: dict[str, dict[str, Any]] = {}
        for setting, value in values.items():
            if setting not in _SECTION_OF:
                raise KeyError(f"no job setting {setting!r}")
            section = _SECTION_OF[setting]
            if section is None:
                whole[setting] = value
            else:
                changes.setdefault(section, {})[setting] = value
        for name, update in changes.items():
            given = getattr(self, name)
            whole[name] = type(given).model_validate(dict(given) | update)
        return self.model_validate(whole)

    def env_of(self, *settings: str) -> dict[str, str]:
        """These settings as the environment `from_env` reads them back: {variable: text}, in order.

        An unset optional setting is "" (which from_env reads as unset).
        """
        return {env_name(name): env_text(self.value(name)) for name in settings}

    def env(self) -> dict[str, str]:
        """The settings every job reads, as environment variables (JOB_ENV_VARS, in order)."""
        return self.env_of(*JOB_SETTINGS)


def _settings() -> dict[str, tuple[str | None, FieldInfo]]:
    """Every setting by name: the section holding it (None: the whole) and its field."""
    found: dict[str, tuple[str | None, FieldInfo]] = {
        name: (None, f) for name, f in JobSettings.model_fields.items() if not is_section(f)
    }
    for attribute, section in JobSettings.sections().items():
        for name, f in section.model_fields.items():
            if name in found:
                raise TypeError(f"job setting {name!r} declared twice")
            found[name] = (attribute, f)
    return found


SETTINGS = _settings()
_SECTION_OF = {name: section for name, (section, _) in SETTINGS.items()}


def env_name(setting: str) -> str:
    """The environment variable of a setting: its alias, else DOCUFLOW_ and the setting's name in capitals."""
    if setting not in SETTINGS:
        raise KeyError(f"no job setting {setting!r}")
    return variable_of(setting, SETTINGS[setting][1])


# The settings the ECS task definitions pass and `local up` exports, in one list.
JOB_SETTINGS = (
    "stage",
    "table_name",
    "raw_bucket",
    "processed_bucket",
    "reports_bucket",
    "arrivals_queue_url",
    "review_lease_seconds",
    "result_url_seconds",
    "retention",
)
JOB_ENV_VARS = tuple(env_name(name) for name in JOB_SETTINGS)

# The variables code names directly (the task definitions, the local stack, checks); every other
# setting is reached through its field, and env_name(setting) gives any variable.
ENV_STAGE = env_name("stage")
ENV_TABLE = env_name("table_name")
ENV_ARRIVALS_QUEUE_URL = env_name("arrivals_queue_url")
ENV_HOLDINGS = env_name("holdings")
ENV_WORKERS = env_name("extract_workers")
ENV_OCR_ENGINE = env_name("ocr_engine")
ENV_TEXTRACT_MAX_PAGES = env_name("textract_max_pages")
ENV_TABLE_ARN = env_name("table_arn")
ENV_REPORT_SIGNING_KEY = env_name("report_signing_key")
ENV_IMAGE_DIGEST = env_name("image_digest")
ENV_REPORTS_TOPIC_ARN = env_name("reports_topic_arn")
ENV_REANCHOR_DAYS = env_name("reconcile_reanchor_days")
ENV_CATCH_UP_DAYS = env_name("reconcile_catch_up_days")
ENV_TABLE_STATE_DAYS = env_name("table_state_days")
ENV_AUDIT_BUCKET = env_name("audit_bucket")
