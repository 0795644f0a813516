"""What every section of the stack settings shares: the namespace, the error, the model config
(a field's config key is its camel-cased name, flat in the `docuflow:` namespace whatever its
section), and the value rules more than one section checks.
"""

from __future__ import annotations

import json
import re
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

NAMESPACE = "docuflow"
REGION_KEY = "aws:region"

CRON = re.compile(r"^cron\(\S+ \S+ \S+ \S+ \S+ \S+\)$")
REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")


class StackSettingsError(ValueError):
    """A stack config value is missing or wrong; the message names the `docuflow:` key."""


def key(name: str) -> str:
    """The config key of a camel-cased field alias (`docuflow:retentionDays`)."""
    return f"{NAMESPACE}:{name}"


class Section(BaseModel):
    """A frozen group of settings, loaded by alias (the config key without its namespace)."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)

    @field_validator("*", mode="before")
    @classmethod
    def _structured(cls, value: Any, info: ValidationInfo) -> Any:
        # pulumi.Config.get returns structured YAML values (lists, maps) as JSON text.
        if isinstance(value, str) and info.field_name is not None:
            origin = typing.get_origin(cls.model_fields[info.field_name].annotation)
            if origin in (list, dict):
                return json.loads(value)
        return value


def each(values: list[str], pattern: re.Pattern[str], what: str) -> list[str]:
    for value in values:
        if not pattern.match(value):
            raise ValueError(f"{value!r} is not a {what}")
    return values


def cron(value: str) -> str:
    if not CRON.match(value):
        raise ValueError(f"{value!r} is not an EventBridge Scheduler cron(m h dom mon dow y)")
    return value
