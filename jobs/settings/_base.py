"""What a settings section is: a pydantic-settings class whose fields each read DOCUFLOW_<FIELD> (or
the alias the field declares), only while `from_env`/`read` names the environment to read.

pydantic-settings does the reading and the decoding; this module only says where from. Built in
code (`StoreSection(raw_bucket=…)`), a section reads no environment at all, so a test's settings do
not depend on the process it runs in. Two kinds of default follow from elsewhere: `FromStage`
(a name left empty is the stage's, filled by the whole, jobs.settings.JobSettings) and
`FromEnvironment` (derived from other variables of the environment read, a source below the
variables themselves).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Self, TypeVar, cast

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)
from pydantic_settings import SettingsError as SourceError
from pydantic_settings.sources.utils import parse_env_vars

from jobs.errors import SettingsError

ENV_PREFIX = "DOCUFLOW_"
_Rule = TypeVar("_Rule")
_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("docuflow_settings_environ", default=None)


@dataclass(frozen=True)
class FromStage:
    """A name that, left empty, is the stage's (jobs.contract.layout): `name(stage)`."""

    name: Callable[[str], str]


@dataclass(frozen=True)
class FromEnvironment:
    """A default derived from other variables of the environment read.

    Settings built in code take the field's own default. `says` is how, for the settings table.
    """

    derive: Callable[[Mapping[str, str]], object]
    says: str


@contextmanager
def _reading(environ: Mapping[str, str]) -> Iterator[None]:
    """Sections built inside read their variables from `environ`."""
    token = _ENVIRON.set(environ)
    try:
        yield
    finally:
        _ENVIRON.reset(token)


class Section(BaseSettings):
    """One concern's settings; see the module docstring for where each value comes from."""

    model_config = SettingsConfigDict(
        frozen=True,
        extra="forbid",
        env_prefix=ENV_PREFIX,
        env_ignore_empty=True,  # an empty variable is unset, as a stack's optional setting is
        validate_by_name=True,  # code names fields; the environment names the aliases
        validate_by_alias=True,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        environ = _ENVIRON.get()
        if environ is None:
            return (init_settings,)
        return (init_settings, _Variables(cls, environ), _Derived(cls, environ))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        """This section as `environ` (the process's by default) holds it; unset and empty variables
        take defaults. A bad value is a SettingsError naming its variable, the text it held and what
        is wrong; every bad value at once.
        """
        problems: list[str] = []
        read = cls.read(os.environ if environ is None else environ, problems)
        if problems:
            raise SettingsError(f"invalid job settings: {'; '.join(problems)}")
        return read

    @classmethod
    def read(cls, environ: Mapping[str, str], problems: list[str], **given: Any) -> Self:
        """As from_env, the problems noted in `problems` (and the section then built without them)."""
        try:
            with _reading(environ):
                return cls(**given)
        except SourceError as exc:  # pydantic-settings' own reading (no field decodes JSON there)
            problems.append(str(exc))
        except ValidationError as exc:
            problems.extend(cls._problem(error, environ) for error in exc.errors())
        return cast(Self, cls.model_construct(**given))  # BaseSettings types it as its own class

    @classmethod
    def _problem(cls, error: ErrorDetails, environ: Mapping[str, str]) -> str:
        """One validation error as the variable, the text it held and what is wrong with it."""
        if not error["loc"]:
            return error["msg"]
        key, *within = (str(part) for part in error["loc"])
        variables = cls.variables()
        variable = variables.get(key, key if key in variables.values() else None)
        if variable is None:
            return f"{key}: {error['msg']}"
        given = environ.get(variable)
        shown = f"={given!r}" if isinstance(given, str) and len(given) <= 80 else ""
        path = f" (at {'.'.join(within)})" if within else ""
        return f"{variable}{shown}{path}: {error['msg']}"

    @classmethod
    def variables(cls) -> dict[str, str]:
        """{field: its variable} of the settings this class reads itself (not its sections')."""
        return {name: variable_of(name, f) for name, f in cls.model_fields.items() if not is_section(f)}

    @classmethod
    def rules(cls, kind: type[_Rule]) -> list[tuple[str, _Rule]]:
        """The fields declaring a rule of this kind (FromStage, FromEnvironment), with the rule."""
        return [(name, rule) for name, f in cls.model_fields.items() for rule in f.metadata if isinstance(rule, kind)]


def is_section(field: FieldInfo) -> bool:
    return isinstance(field.annotation, type) and issubclass(field.annotation, Section)


def variable_of(name: str, field: FieldInfo) -> str:
    """A field's variable: its alias, else DOCUFLOW_ and the field's name in capitals."""
    alias = field.validation_alias
    return alias if isinstance(alias, str) else f"{ENV_PREFIX}{name.upper()}"


class _Variables(EnvSettingsSource):
    """pydantic-settings' environment source over the mapping being read, holding exactly the
    declared variables as spelt: pydantic-settings alone would also take `docuflow_stage` (names
    match case-insensitively, the last spelling winning), a field's prefixed name beside its alias
    (`DOCUFLOW_SHARD_INDEX` for SHARD_INDEX) and a section's own name as JSON, none of which a task
    definition sets.
    """

    def __init__(self, settings_cls: type[Section], environ: Mapping[str, str]) -> None:
        declared = set(settings_cls.variables().values())
        self._environ = {name: value for name, value in environ.items() if name in declared}
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)


class _Derived(PydanticBaseSettingsSource):
    """The FromEnvironment defaults, below the variables: a variable set says otherwise."""

    def __init__(self, settings_cls: type[Section], environ: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self._values = {name: rule.derive(environ) for name, rule in settings_cls.rules(FromEnvironment)}

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._values)


def env_text(value: object) -> str:
    """A setting's value as its variable holds it (reading it back gives the same value)."""
    if value is None:
        return ""
    if isinstance(value, BaseModel):
        return value.model_dump_json(by_alias=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)
