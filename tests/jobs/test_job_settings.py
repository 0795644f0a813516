"""JobSettings declared once, in sections: each field yields its variable, type, default and
description; no section (nor the whole) holds more than 25 settings; the variables are the ones the
task definitions always set; the environment `env_of` writes is the one `from_env` reads back (a
property over every field); only `from_env` reads an environment; a bad value names its variable;
docs/deploy.md's "Job settings" table is the declaration's.

The table is regenerated (review its diff in the commit) with
`DOCUFLOW_RECORD_SETTINGS=1 .venv/bin/python -m pytest -q tests/jobs/test_job_settings.py`.
"""

from __future__ import annotations

import os
import re
import types
from datetime import UTC, datetime, timedelta, timezone
from enum import Enum
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from jobs import settings as job_settings
from jobs.contract import layout
from jobs.contract.engines import OcrEngine
from jobs.errors import SettingsError
from jobs.extract.settings import ExtractionSettings
from jobs.settings import (
    ENV_PREFIX,
    JOB_ENV_VARS,
    JOB_SETTINGS,
    SETTINGS,
    ExtractionChoices,
    ExtractionSection,
    FromEnvironment,
    FromStage,
    IngestSection,
    JobSettings,
    ReconcileSection,
    env_name,
    env_text,
)

FIELDS = {name: field for name, (_, field) in SETTINGS.items()}
DOC = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"
BEGIN, END = "<!-- job-settings:begin -->", "<!-- job-settings:end -->"
RECORD = "DOCUFLOW_RECORD_SETTINGS=1 .venv/bin/python -m pytest -q tests/jobs/test_job_settings.py"


# --- The declaration ----------------------------------------------------------------------------
def test_every_setting_says_what_it_is() -> None:
    undescribed = [name for name, field in FIELDS.items() if len((field.description or "").strip()) < 10]
    assert not undescribed, f"give these settings a Field(description=…): {undescribed}"


# The variables before the settings were split into sections: the task definitions set these.
VARIABLES = [
    "DOCUFLOW_STAGE",
    "DOCUFLOW_TABLE_NAME",
    "DOCUFLOW_STATUS_INDEX_NAME",
    "DOCUFLOW_RAW_BUCKET",
    "DOCUFLOW_PROCESSED_BUCKET",
    "DOCUFLOW_REPORTS_BUCKET",
    "DOCUFLOW_ARRIVALS_QUEUE_URL",
    "DOCUFLOW_RETENTION",
    "DOCUFLOW_HOLDINGS",
    "DOCUFLOW_MAX_ATTEMPTS",
    "DOCUFLOW_LEASE_SECONDS",
    "DOCUFLOW_IO_THREADS",
    "DOCUFLOW_EXTRACT_WORKERS",
    "DOCUFLOW_RETRY_MODE",
    "DOCUFLOW_RETRY_ATTEMPTS",
    "DOCUFLOW_CONFIDENCE_THRESHOLD",
    "DOCUFLOW_OCR_ENGINE",
    "DOCUFLOW_TEXTRACT_TPS",
    "SHARD_INDEX",
    "SHARD_COUNT",
    "DOCUFLOW_TEXTRACT_FALLBACK",
    "DOCUFLOW_TEXTRACT_MAX_PAGES",
    "DOCUFLOW_SCHEDULED_TIME",
    "DOCUFLOW_FAILED_RATIO_THRESHOLD",
    "DOCUFLOW_SQS_MOVE_TASKS",
    "DOCUFLOW_TABLE_ARN",
    "DOCUFLOW_REPORT_SIGNING_KEY",
    "DOCUFLOW_SCHEDULE_TIMEZONE",
    "DOCUFLOW_IMAGE_DIGEST",
    "DOCUFLOW_REPORTS_TOPIC_ARN",
    "DOCUFLOW_ATHENA_WORKGROUP",
    "DOCUFLOW_GLUE_DATABASE",
    "DOCUFLOW_GLUE_EXPORT_TABLE",
    "DOCUFLOW_GLUE_INCREMENTAL_TABLE",
    "DOCUFLOW_GLUE_STATE_TABLE",
    "DOCUFLOW_GLUE_RAW_INVENTORY_TABLE",
    "DOCUFLOW_GLUE_PROCESSED_INVENTORY_TABLE",
    "DOCUFLOW_INVENTORY_BUCKET",
    "DOCUFLOW_INVENTORY_PREFIX",
    "DOCUFLOW_INVENTORY_CONFIG_ID",
    "DOCUFLOW_INVENTORY_MAX_AGE_HOURS",
    "DOCUFLOW_FIRST_INVENTORY_HOURS",
    "DOCUFLOW_EXPORT_BUCKET",
    "DOCUFLOW_EXPORT_PREFIX",
    "DOCUFLOW_STATE_BUCKET",
    "DOCUFLOW_RECONCILE_REANCHOR_DAYS",
    "DOCUFLOW_RECONCILE_CATCH_UP_DAYS",
    "DOCUFLOW_TABLE_STATE_DAYS",
    "DOCUFLOW_REVIEW_LEASE_SECONDS",
    "DOCUFLOW_RESULT_URL_SECONDS",
    "DOCUFLOW_AUDIT_BUCKET",
    "DOCUFLOW_AUDIT_LOG_SINCE",
    "DOCUFLOW_AUDIT_WORKGROUP",
    "DOCUFLOW_TRAIL_DATABASE",
]


def test_the_variables_are_the_ones_the_stacks_set() -> None:
    assert sorted(env_name(name) for name in FIELDS) == sorted(VARIABLES)


def test_settings_come_in_small_sections() -> None:
    assert len(JobSettings.model_fields) <= 25
    sizes = {name: len(section.model_fields) for name, section in JobSettings.sections().items()}
    assert all(size <= 25 for size in sizes.values()), sizes
    assert set(sizes) == {"store", "ingest", "extraction", "reconcile", "review", "audit", "run"}


def test_a_section_is_read_from_the_environment_alone() -> None:
    read = ReconcileSection.from_env({"DOCUFLOW_ATHENA_WORKGROUP": "wg", "DOCUFLOW_TABLE_STATE_DAYS": "3"})
    assert read == ReconcileSection(athena_workgroup="wg", table_state_days=3)
    ingest = IngestSection.from_env({"SHARD_INDEX": "2", "DOCUFLOW_STAGE": "qa"})  # another section's: not read
    assert ingest == IngestSection(shard_index=2, sqs_move_tasks=True)  # derived: no SQS endpoint given
    with pytest.raises(SettingsError, match=r"^invalid job settings: DOCUFLOW_TABLE_STATE_DAYS='soon': Input"):
        ReconcileSection.from_env({"DOCUFLOW_TABLE_STATE_DAYS": "soon"})
    assert JobSettings.from_env({"DOCUFLOW_TABLE_STATE_DAYS": "3"}).reconcile.table_state_days == 3


def test_an_extraction_is_its_sections_choices() -> None:
    # Every choice a stack makes of an extraction reaches it: none copied by hand, none left out.
    section = ExtractionSection(confidence_threshold=61, ocr_engine=OcrEngine.TEXTRACT)
    extraction = ExtractionSettings.of(section)
    assert set(ExtractionChoices.model_fields) == {"confidence_threshold", "ocr_engine"}
    assert (extraction.confidence_threshold, extraction.ocr_engine) == (61, OcrEngine.TEXTRACT)
    assert extraction.max_input_bytes == ExtractionSettings().max_input_bytes


def test_changed_names_settings_and_checks_them() -> None:
    base = JobSettings(stage="qa")
    changed = base.changed(extract_workers=2, ocr_engine="off", stage="qb")
    assert (changed.ingest.extract_workers, changed.extraction.ocr_engine, changed.stage) == (2, OcrEngine.OFF, "qb")
    assert changed.store == base.store and base.ingest.extract_workers == 0
    with pytest.raises(ValueError, match="extract_workers"):
        base.changed(extract_workers=-1)
    with pytest.raises(KeyError, match="no job setting 'workers'"):
        base.changed(workers=1)


def test_a_copy_naming_a_setting_instead_of_a_field_is_refused_not_ignored() -> None:
    base = JobSettings(stage="qa")
    # A setting lives in its section: this update would set an attribute nothing reads.
    with pytest.raises(KeyError, match="ocr_engine"):
        base.model_copy(update={"ocr_engine": "textract"})
    assert base.model_copy(update={"stage": "qb"}).stage == "qb"


def test_variables_are_derived_from_the_fields() -> None:
    names = [env_name(name) for name in FIELDS]
    assert len(set(names)) == len(names)
    aliased = {name: env_name(name) for name in FIELDS if FIELDS[name].validation_alias}
    # The names older than the rule: the scheduler's shard pair and the status index.
    assert aliased == {
        "index_name": "DOCUFLOW_STATUS_INDEX_NAME",
        "shard_index": "SHARD_INDEX",
        "shard_count": "SHARD_COUNT",
    }
    assert all(env_name(n) == ENV_PREFIX + n.upper() for n in FIELDS if n not in aliased)
    with pytest.raises(KeyError, match="no job setting 'stage_name'"):
        env_name("stage_name")


def test_env_constants_name_declared_settings() -> None:
    constants = {k: v for k, v in vars(job_settings).items() if k.startswith("ENV_") and k != "ENV_PREFIX"}
    declared = {env_name(name) for name in FIELDS}
    assert set(constants.values()) <= declared, set(constants.values()) - declared
    # The names other modules import keep their spelling.
    assert constants["ENV_STAGE"] == "DOCUFLOW_STAGE" and constants["ENV_TABLE"] == "DOCUFLOW_TABLE_NAME"
    assert constants["ENV_WORKERS"] == "DOCUFLOW_EXTRACT_WORKERS"
    assert constants["ENV_REANCHOR_DAYS"] == "DOCUFLOW_RECONCILE_REANCHOR_DAYS"
    assert tuple(env_name(name) for name in JOB_SETTINGS) == JOB_ENV_VARS
    assert JOB_ENV_VARS[:2] == ("DOCUFLOW_STAGE", "DOCUFLOW_TABLE_NAME")


# --- Round trips --------------------------------------------------------------------------------
_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)
_ZONES = st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))])


def _bounds(field: FieldInfo) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for rule in field.metadata:
        for bound in ("ge", "gt", "le", "lt", "pattern"):
            if getattr(rule, bound, None) is not None:
                found[bound] = getattr(rule, bound)
    return found


def _number(kind: type, bounds: dict[str, Any]) -> st.SearchStrategy[Any]:
    low, high = bounds.get("ge", bounds.get("gt")), bounds.get("le", bounds.get("lt"))
    if kind is int:
        return st.integers(None if low is None else low + ("gt" in bounds), high)
    return st.floats(low, high, exclude_min="gt" in bounds, allow_nan=False, allow_infinity=False)


def _values(annotation: Any, field: FieldInfo | None = None) -> st.SearchStrategy[Any]:
    """Every valid value of a declared type (nested models field by field)."""
    bounds = _bounds(field) if field is not None else {}
    args = get_args(annotation)
    if get_origin(annotation) in (Union, types.UnionType):
        return st.one_of([st.none() if a is type(None) else _values(a, field) for a in args])
    if get_origin(annotation) is Literal or (isinstance(annotation, type) and issubclass(annotation, Enum)):
        return st.sampled_from(list(args or annotation))
    if get_origin(annotation) is dict:
        return st.dictionaries(_values(args[0]), _values(args[1]), max_size=3)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = {n: _values(f.annotation, f) for n, f in annotation.model_fields.items()}
        return st.builds(annotation, **fields)
    if annotation is bool:
        return st.booleans()
    if annotation in (int, float):
        return _number(annotation, bounds)
    if annotation is datetime:
        return st.datetimes(datetime(1970, 1, 1), datetime(9000, 1, 1), timezones=_ZONES)
    assert annotation is str, annotation
    if "pattern" in bounds:
        return st.from_regex(bounds["pattern"], fullmatch=True)
    # A name with a default of its own cannot be empty: an empty variable is unset.
    return _TEXT if field is None or field.default in ("", None) else _TEXT.filter(bool)


def _section(section: type[BaseModel]) -> st.SearchStrategy[Any]:
    return st.builds(section, **{name: _values(f.annotation, f) for name, f in section.model_fields.items()})


CHOSEN = st.builds(
    JobSettings,
    stage=_values(str, JobSettings.model_fields["stage"]),
    **{name: _section(section) for name, section in JobSettings.sections().items()},
)


@settings(max_examples=150, deadline=None)
@given(CHOSEN)
def test_from_env_reads_back_what_env_of_writes(chosen: JobSettings) -> None:
    environment = chosen.env_of(*FIELDS)
    assert set(environment) == {env_name(name) for name in FIELDS}
    assert JobSettings.from_env(environment) == chosen


@settings(max_examples=50, deadline=None)
@given(CHOSEN)
def test_env_is_the_job_settings_and_reads_back(chosen: JobSettings) -> None:
    environment = chosen.env()
    assert tuple(environment) == JOB_ENV_VARS
    read = JobSettings.from_env(environment)
    assert {name: read.value(name) for name in JOB_SETTINGS} == {name: chosen.value(name) for name in JOB_SETTINGS}


def test_env_text() -> None:
    since = datetime(2026, 1, 1, tzinfo=UTC)
    assert [env_text(v) for v in (None, True, False, 7, 0.5, OcrEngine.OFF, since)] == [
        "",
        "true",
        "false",
        "7",
        "0.5",
        "off",
        "2026-01-01T00:00:00+00:00",
    ]
    assert JobSettings().env_of("retention", "textract_max_pages") == {
        "DOCUFLOW_RETENTION": JobSettings().store.retention.to_env(),
        "DOCUFLOW_TEXTRACT_MAX_PAGES": "",
    }


# --- Where values come from ---------------------------------------------------------------------
def test_only_from_env_reads_an_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCUFLOW_STAGE", "prod")
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:1")
    monkeypatch.setenv("SHARD_COUNT", "4")
    built = JobSettings(extraction=ExtractionSection(textract_tps=2.0))
    assert (built.stage, built.extraction.ocr_engine, built.ingest.shard_count, built.extraction.textract_tps) == (
        "dev",
        OcrEngine.LOCAL,
        1,
        2.0,
    )
    assert JobSettings.from_env({"DOCUFLOW_STAGE": "qa"}).stage == "qa"  # the mapping given, only
    assert JobSettings.from_env({}).ingest.shard_count == 1
    assert (JobSettings.from_env().stage, JobSettings.from_env().ingest.shard_count) == ("prod", 4)
    assert os.environ["DOCUFLOW_STAGE"] == "prod"


def test_names_follow_the_stage_unless_given() -> None:
    qa = JobSettings.from_env({"DOCUFLOW_STAGE": "qa", "DOCUFLOW_RAW_BUCKET": "", "DOCUFLOW_GLUE_DATABASE": "mine"})
    assert qa.store.table_name == layout.table_name("qa") and qa.store.index_name == layout.status_index_name("qa")
    assert qa.store.raw_bucket == layout.bucket_name("qa", "raw")  # empty is unset
    assert qa.reconcile.glue_database == "mine"
    assert qa.audit.audit_bucket == layout.bucket_name("qa", layout.AUDIT_LOG)
    staged = [name for name, field in FIELDS.items() if any(isinstance(r, FromStage) for r in field.metadata)]
    assert all(JobSettings(stage="qa").value(name) for name in staged) and len(staged) == 13


@pytest.mark.parametrize(
    ("environment", "engine", "move_tasks"),
    [
        ({}, OcrEngine.TEXTRACT, True),  # AWS
        ({"AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000"}, OcrEngine.LOCAL, True),
        ({"AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:9001"}, OcrEngine.TEXTRACT, False),
        (
            {"AWS_ENDPOINT_URL_S3": "http://x", "DOCUFLOW_OCR_ENGINE": "off", "DOCUFLOW_SQS_MOVE_TASKS": "true"},
            "off",
            True,
        ),
    ],
)
def test_defaults_derived_from_the_environment(environment: dict[str, str], engine: str, move_tasks: bool) -> None:
    read = JobSettings.from_env(environment)
    assert (read.extraction.ocr_engine, read.ingest.sqs_move_tasks) == (engine, move_tasks)
    derived = {name for name, field in FIELDS.items() if any(isinstance(r, FromEnvironment) for r in field.metadata)}
    assert derived == {"ocr_engine", "sqs_move_tasks"}


def test_inventory_freshness_settings() -> None:
    assert (JobSettings().reconcile.inventory_max_age_hours, JobSettings().reconcile.first_inventory_hours) == (48, 48)
    read = JobSettings.from_env({"DOCUFLOW_INVENTORY_MAX_AGE_HOURS": "30", "DOCUFLOW_FIRST_INVENTORY_HOURS": "0"})
    assert (read.reconcile.inventory_max_age_hours, read.reconcile.first_inventory_hours) == (30, 0)


# --- Bad values ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("environment", "message"),
    [
        (
            {"DOCUFLOW_LEASE_SECONDS": "43201"},
            "DOCUFLOW_LEASE_SECONDS='43201': Input should be less than or equal to 43200",
        ),
        ({"DOCUFLOW_IO_THREADS": "many"}, "DOCUFLOW_IO_THREADS='many': Input should be a valid integer"),
        ({"SHARD_COUNT": "0"}, "SHARD_COUNT='0': Input should be greater than or equal to 1"),
        ({"DOCUFLOW_STATUS_INDEX_NAME": "x", "SHARD_INDEX": "-1"}, "SHARD_INDEX='-1'"),
        ({"DOCUFLOW_INVENTORY_MAX_AGE_HOURS": "0"}, "DOCUFLOW_INVENTORY_MAX_AGE_HOURS='0': Input should be greater"),
        ({"DOCUFLOW_STAGE": "Prod"}, "DOCUFLOW_STAGE='Prod': String should match pattern"),
        ({"DOCUFLOW_OCR_ENGINE": "tess"}, "DOCUFLOW_OCR_ENGINE='tess': Input should be 'textract', 'local' or 'off'"),
        (
            {"DOCUFLOW_TEXTRACT_FALLBACK": "maybe"},
            "DOCUFLOW_TEXTRACT_FALLBACK='maybe': Input should be a valid boolean",
        ),
        ({"DOCUFLOW_AUDIT_LOG_SINCE": "2026-01-01T00:00:00"}, "DOCUFLOW_AUDIT_LOG_SINCE=.*give a time zone"),
        ({"DOCUFLOW_RETENTION": "{bad"}, "DOCUFLOW_RETENTION='{bad': Invalid JSON"),
        (
            {"DOCUFLOW_RETENTION": '{"graceDays": 0}'},
            r"DOCUFLOW_RETENTION=.* \(at graceDays\): Input should be greater",
        ),
        ({"DOCUFLOW_HOLDINGS": '{"pitr": 3}'}, r"DOCUFLOW_HOLDINGS=.* \(at pitr\): Extra inputs are not permitted"),
    ],
)
def test_a_bad_value_names_its_variable(environment: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match="^invalid job settings: .*" + message):
        JobSettings.from_env(environment)


def test_every_bad_value_is_named_at_once() -> None:
    with pytest.raises(SettingsError) as info:
        JobSettings.from_env({"DOCUFLOW_MAX_ATTEMPTS": "0", "DOCUFLOW_RETRY_MODE": "eager", "DOCUFLOW_STAGE": "qa"})
    assert str(info.value).count("; ") == 1
    assert "DOCUFLOW_MAX_ATTEMPTS='0'" in str(info.value) and "DOCUFLOW_RETRY_MODE='eager'" in str(info.value)


def test_a_long_value_is_not_repeated() -> None:
    with pytest.raises(SettingsError) as info:
        JobSettings.from_env({"DOCUFLOW_HOLDINGS": '{"pointInTimeRecoveryDays": 36' + " " * 100 + "}"})
    assert str(info.value).startswith("invalid job settings: DOCUFLOW_HOLDINGS (at pointInTimeRecoveryDays): ")


def test_settings_built_in_code_are_checked_too() -> None:
    with pytest.raises(ValueError, match="textract_tps"):
        ExtractionSection(textract_tps=0)
    with pytest.raises(ValueError, match="Extra inputs"):
        JobSettings(stage_name="qa")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="frozen"):
        JobSettings().stage = "qa"  # type: ignore[misc]


# --- The table in docs/deploy.md ----------------------------------------------------------------
def _kind(annotation: Any, field: FieldInfo) -> str:
    bounds = _bounds(field)
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) in (Union, types.UnionType):
        return _kind(args[0], field)
    if get_origin(annotation) is Literal or (isinstance(annotation, type) and issubclass(annotation, Enum)):
        return " / ".join(f"`{getattr(a, 'value', a)}`" for a in (args or annotation))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"JSON ({annotation.__name__})"
    if annotation is datetime:
        return "ISO 8601 time with its zone"
    if "pattern" in bounds:
        return f"text `{bounds['pattern']}`"
    low = f"≥ {bounds['ge']}" if "ge" in bounds else f"> {bounds['gt']}" if "gt" in bounds else ""
    high = f"≤ {bounds['le']}" if "le" in bounds else ""
    kind = {str: "text", int: "integer", float: "number", bool: "`true` / `false`"}[annotation]
    return f"{kind} {', '.join(b for b in (low, high) if b)}".strip()


def _default(field: FieldInfo) -> str:
    for rule in field.metadata:
        if isinstance(rule, FromStage):
            return f"`{rule.name('{stage}')}`"
        if isinstance(rule, FromEnvironment):
            return rule.says
    value = field.default
    if isinstance(value, BaseModel):
        return "its defaults"
    return "unset" if value in ("", None) else f"`{env_text(value)}`"


def settings_table() -> str:
    rows = ["| Variable | Read as | Type | Default | Description |", "|---|---|---|---|---|"]
    for name, (section, field) in SETTINGS.items():
        read_as = f"`settings.{section + '.' if section else ''}{name}`"
        cells = (
            f"`{env_name(name)}`",
            read_as,
            _kind(field.annotation, field),
            _default(field),
            field.description or "",
        )
        rows.append("| " + " | ".join(cell.replace("|", r"\|") for cell in cells) + " |")
    return "\n".join(rows)


def test_the_docs_list_every_setting() -> None:
    text = DOC.read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1, f"docs/deploy.md needs {BEGIN} … {END}"
    head, rest = text.split(BEGIN)
    documented, tail = rest.split(END)
    expected = f"\n{settings_table()}\n"
    if os.environ.get("DOCUFLOW_RECORD_SETTINGS") and documented != expected:
        DOC.write_text(f"{head}{BEGIN}{expected}{END}{tail}")
        pytest.skip("docs/deploy.md's settings table rewritten: review its diff")
    assert documented == expected, f"docs/deploy.md's job settings table is out of step: {RECORD}"
    assert re.search(r"^\| `DOCUFLOW_STAGE` \| `settings.stage` \| text `\^\[a-z\]", expected, re.M)


def test_only_the_declared_variables_are_read_exactly_as_spelt() -> None:
    # A lower-case spelling is another variable (no task definition sets it), and a field's
    # prefixed name is not its alias: neither is read, nor does it override the declared one.
    assert JobSettings.from_env({"docuflow_stage": "prod"}).stage == "dev"
    assert JobSettings.from_env({"DOCUFLOW_STAGE": "prod", "docuflow_stage": "dev"}).stage == "prod"
    assert JobSettings.from_env({"DOCUFLOW_SHARD_INDEX": "7", "SHARD_COUNT": "9"}).ingest.shard_index == 0
    assert JobSettings.from_env({"SHARD_INDEX": "7", "SHARD_COUNT": "9"}).ingest.shard_index == 7
