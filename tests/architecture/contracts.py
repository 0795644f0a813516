"""The import contracts in `.importlinter`, read for the tests that check what import-linter cannot.

import-linter reads the source (every import, wherever written); the tests beside this module check
what only running Python can (a module that imports with the SDKs refused) and that the contracts'
hand-written lists keep up with the tree (every package placed, every boto3 stub forbidden).
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

from tests.architecture.registry_contracts import expand_layers, expand_modules

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG = REPO_ROOT / ".importlinter"
DEV_STACK = ("jobs.local", "jobs.demo")


def contract(name: str, root: Path = REPO_ROOT) -> configparser.SectionProxy:
    parser = configparser.ConfigParser()
    parser.read(root / CONFIG.name)
    return parser[f"importlinter:contract:{name}"]


def contract_names(root: Path = REPO_ROOT) -> set[str]:
    parser = configparser.ConfigParser()
    parser.read(root / CONFIG.name)
    return {parser[s]["name"] for s in parser if s.startswith("importlinter:contract:")}


def entries(value: str) -> list[str]:
    """A multi-line option's values, comments and blank lines dropped, a module list's
    `REGISTRY_JOBS` expanded as lint-imports expands it (registry_contracts): one entry per job package.
    """
    lines = [line.split("#", 1)[0].strip() for line in value.splitlines()]
    return expand_modules([line for line in lines if line])


def pure_targets() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(modules, packages) of the `pure` contract: a `pkg.**` entry names every module below pkg."""
    sources = entries(contract("pure")["source_modules"])
    packages = tuple(s.removesuffix(".**") for s in sources if s.endswith(".**"))
    modules = tuple(s for s in sources if not s.endswith(".**"))
    return modules, packages


def jobs_packages(root: Path = REPO_ROOT) -> set[str]:
    """Every child of `jobs` (packages and single modules), as import-linter sees them."""
    children = {p.stem for p in (root / "jobs").glob("*.py") if p.stem != "__init__"}
    children |= {p.parent.name for p in (root / "jobs").glob("*/__init__.py")}
    return {f"jobs.{c}" for c in children}


def layer_names() -> set[str]:
    """The packages the `layers` contract places, optional ones included."""
    lines = [line.split("#", 1)[0].strip() for line in contract("layers")["layers"].splitlines()]
    layers = expand_layers([line for line in lines if line], "jobs")
    return {"jobs." + name.strip("() ") for layer in layers for name in re.split(r"[|:]", layer)}


def stub_packages(root: Path = REPO_ROOT) -> set[str]:
    """The boto3 service stubs (`mypy-boto3-*`) requirements-dev.txt installs, as module names."""
    text = (root / "requirements-dev.txt").read_text()
    return {m.replace("-", "_") for m in re.findall(r"^(mypy-boto3-[a-z0-9-]+)==", text, re.MULTILINE)}
