"""Pulumi.yaml declares every setting: its type and default are StackSettings' own, so the
project file, which `pulumi config` and the engine read, and the program cannot drift apart.

The engine merges a declared key's default into a stack that does not set it, refuses a stack
value of the wrong type, and refuses a stack that lacks a key declared without a default.
"""

from __future__ import annotations

import enum
import json
import typing
from typing import Any

import pytest
import yaml
from pydantic.fields import FieldInfo

from components.settings import NAMESPACE, StackSettings
from tests.components.program import REPO_ROOT, project_config, stack_config, stack_files

DECLARED: dict[str, dict[str, Any]] = yaml.safe_load((REPO_ROOT / "Pulumi.yaml").read_text())["config"]
# Pulumi lets a project type only its own namespace (aws:region is the provider's).
FIELDS = {key: where.info for key, where in StackSettings.keys().items()}
OURS = {key: field for key, field in FIELDS.items() if key.startswith(f"{NAMESPACE}:")}


def pulumi_type(field: FieldInfo) -> str | None:
    """The project config type of a field (Pulumi has no object type: dicts are untyped)."""
    annotation = field.annotation
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if type(None) in typing.get_args(annotation):
        (annotation,) = args
    if annotation is bool:
        return "boolean"
    if annotation is int:
        return "integer"
    origin = typing.get_origin(annotation)
    if origin is list:
        return "array"
    return None if origin is dict else "string"


def field_default(field: FieldInfo) -> Any:
    """The field's default as Pulumi.yaml spells it ("" for None: Pulumi has no optional key)."""
    value = field.default_factory() if field.default_factory else field.default  # type: ignore[call-arg]
    if isinstance(value, enum.Enum):
        return value.value
    return "" if value is None else value


def test_every_setting_is_declared_and_every_declared_key_is_a_setting() -> None:
    assert set(DECLARED) == set(OURS)


@pytest.mark.parametrize("key", sorted(OURS))
def test_a_declared_key_has_the_settings_type_default_and_a_description(key: str) -> None:
    field, declared = OURS[key], DECLARED[key]
    assert declared.get("type") == pulumi_type(field)
    if declared.get("type") == "array":
        assert declared["items"] == {"type": "string"}
    assert declared["description"].strip()
    if field.is_required():
        # Required on every stack: Pulumi refuses a stack without it.
        assert "default" not in declared
    else:
        assert declared["default"] == field_default(field)


@pytest.mark.parametrize("stack", stack_files())
def test_every_stack_value_has_its_declared_type(stack: str) -> None:
    """What the engine checks at `pulumi up` (workspace.ValidateConfigValue), here at test time."""
    raw = yaml.safe_load((REPO_ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    for key, value in raw.items():
        kind = DECLARED.get(key, {}).get("type")
        if kind == "integer":
            assert isinstance(value, int) or str(value).lstrip("-").isdigit(), key
        elif kind == "boolean":
            assert value in (True, False, "true", "false"), key
        elif kind == "array":
            assert isinstance(value, list) and all(isinstance(v, str) for v in value), key
        elif kind == "string":
            assert not isinstance(value, list | dict), key
    missing = {k for k, d in DECLARED.items() if "default" not in d} - set(raw)
    assert not missing, f"Pulumi.{stack}.yaml lacks required keys {missing}"


def test_the_engine_merges_the_declared_defaults() -> None:
    """stack_config() hands the program what the engine would: the stack's keys plus the
    declared defaults of the others, as strings; the defaults build the settings' defaults.
    """
    merged = stack_config("prod")
    assert merged["docuflow:glacierAfterDays"] == "365"  # not in Pulumi.prod.yaml
    assert merged["docuflow:alarmEmail"] == ""  # declared optional: "" is unset
    assert json.loads(merged["docuflow:imageReleaseTagPrefixes"]) == ["20"]
    assert StackSettings.from_mapping(merged).operations.alarm_email is None
    assert set(project_config()) == {k for k, d in DECLARED.items() if "default" in d}
