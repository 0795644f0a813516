"""Import-linter contract types whose package lists come from the job registry.

`.importlinter` registers these (`contract_types`) and writes `REGISTRY_JOBS` where a contract
needs "every job package": the packages of the registry's CLI modules (jobs.runtime.registry.JOBS)
that the contract does not already name. A new job package is then placed, forbidden from boto3 and
kept out of the components by adding its registry line alone, and `lint-imports` checks it at once.
"""

from __future__ import annotations

from typing import Any

from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.layers import LayersContract

TOKEN = "REGISTRY_JOBS"


def registry_packages(in_image_only: bool = True) -> list[str]:
    """The `jobs.<package>` of every registry job's CLI module, in registry order, once each."""
    from jobs.registry import JOBS

    packages: list[str] = []
    for spec in JOBS:
        package = ".".join(spec.module.split(".")[:2])
        if (spec.in_image or not in_image_only) and package not in packages:
            packages.append(package)
    return packages


def _lines(raw: str | list[str]) -> list[str]:
    return raw if isinstance(raw, list) else raw.splitlines()


def _named(lines: list[str]) -> set[str]:
    """Every module a contract option's lines name (layer lines split at `|`), comments dropped."""
    names = set()
    for line in lines:
        for part in line.split("#", 1)[0].split("|"):
            if part.strip() and part.strip() != TOKEN:
                names.add(part.strip())
    return names


def expand_layers(raw: str | list[str], container: str) -> list[str]:
    """`raw`'s layer lines with TOKEN replaced by the registry's job packages no other layer names."""
    lines = _lines(raw)
    named = _named(lines)
    prefix = f"{container}."
    packages = [p.removeprefix(prefix) for p in registry_packages() if p.removeprefix(prefix) not in named]
    return [line.replace(TOKEN, " | ".join(packages)) for line in lines]


def expand_modules(raw: str | list[str]) -> list[str]:
    """`raw`'s module lines with TOKEN replaced by the registry's job packages not already listed."""
    lines = _lines(raw)
    named = _named(lines)
    out: list[str] = []
    for line in lines:
        if line.split("#", 1)[0].strip() == TOKEN:
            out += [p for p in registry_packages() if p not in named]
        else:
            out.append(line)
    return out


class RegistryLayersContract(LayersContract):
    """A layers contract whose `layers` may hold TOKEN (in one layer, beside other members)."""

    def __init__(self, name: str, session_options: dict[str, Any], contract_options: dict[str, Any]) -> None:
        options = dict(contract_options)
        containers = _named(_lines(options.get("containers", [])))
        options["layers"] = expand_layers(options["layers"], next(iter(containers)) if len(containers) == 1 else "")
        super().__init__(name, session_options, options)


class RegistryForbiddenContract(ForbiddenContract):
    """A forbidden contract whose `source_modules` or `forbidden_modules` may hold TOKEN."""

    def __init__(self, name: str, session_options: dict[str, Any], contract_options: dict[str, Any]) -> None:
        options = dict(contract_options)
        for key in ("source_modules", "forbidden_modules"):
            if key in options:
                options[key] = expand_modules(options[key])
        super().__init__(name, session_options, options)
