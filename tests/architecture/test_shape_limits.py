"""Limits that keep the tree navigable, checked over jobs/, components/ and the Pulumi program.

- No production module over 600 lines: a module that long holds several concerns; split it by
  concern into a package.
- No settings or arguments class over 25 fields: settings come in sections, one per job or concern,
  composed into the whole.
- jobs/reconcile/ holds at most 15 modules at its top level: the job there, its library (rules,
  the nightly chain, the report, engines, inputs) in subpackages.
- No name resolved from a string in components/: a component reaches a job's task, policy, size
  and schedule through typed references, so a rename is a type error, not a deploy-time KeyError.
- The removed spellings of the reconcile and ingest options stay removed.

The checkers are tested too, on small synthetic trees, so these rules can fail.
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.architecture.code_rules import (
    MAX_MODULE_LINES,
    MAX_SETTINGS_FIELDS,
    Module,
    load,
    long_modules,
    name_resolutions,
    top_level_modules,
    wide_settings,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
MAX_RECONCILE_TOP_LEVEL = 15
# Spelled in parts so this file is not a hit of its own search.
REMOVED_SPELLINGS = ("Reconcile" + "Options", "OLD_" + "FLAGS", "with_" + "mode")


@pytest.fixture(scope="module")
def modules() -> dict[str, Module]:
    return load(REPO_ROOT)


def test_no_production_module_over_600_lines(modules: dict[str, Module]) -> None:
    assert long_modules(modules) == {}, f"split it by concern: modules stay within {MAX_MODULE_LINES} lines"


def test_no_settings_class_over_25_fields(modules: dict[str, Module]) -> None:
    assert wide_settings(modules) == {}, f"group it in sections of at most {MAX_SETTINGS_FIELDS} fields"


def test_reconcile_keeps_its_library_in_subpackages() -> None:
    top = top_level_modules(REPO_ROOT / "jobs" / "reconcile")
    assert len(top) <= MAX_RECONCILE_TOP_LEVEL, top
    assert {"rules", "chain", "report", "engines", "inputs"} <= set(top)


def test_components_resolve_no_name_from_a_string() -> None:
    assert name_resolutions(load(REPO_ROOT, ("components", "__main__.py"))) == []


def test_the_removed_spellings_stay_removed() -> None:
    for spelling in REMOVED_SPELLINGS:
        found = subprocess.run(
            ["git", "grep", "-n", "-w", spelling, "--", "jobs", "components", "tests", "bench", "docs", "README.md"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
        )
        assert found.returncode == 1, f"{spelling} is back:\n{found.stdout}"


# --- the checkers themselves, on synthetic trees ------------------------------------------------
def _tree(root: Path, files: dict[str, str]) -> dict[str, Module]:
    for name, text in files.items():
        path = root / "jobs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return load(root, ("jobs",))


def test_every_command_runs_through_run_job_under_its_own_declaration() -> None:
    import importlib

    from jobs.registry import JOBS
    from jobs.runtime.context import Cli

    for spec in JOBS:
        module = importlib.import_module(spec.module)
        assert isinstance(module.CLI, Cli) and module.CLI.job is spec, spec.name
        assert "run_job(CLI, argv)" in Path(module.__file__ or "").read_text(), spec.name


def test_a_long_module_is_found(tmp_path: Path) -> None:
    modules = _tree(tmp_path, {"__init__.py": "", "short.py": "x = 1\n", "long.py": "x = 1\n" * 601})
    assert long_modules(modules) == {"jobs.long": 601}


def test_a_wide_settings_class_is_found_but_class_vars_and_other_classes_are_not(tmp_path: Path) -> None:
    fields = "".join(f"    f{i}: int = 0\n" for i in range(26))
    modules = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": f"class WideSettings:\n{fields}\n\nclass Other:\n{fields}",
            "b.py": "from typing import ClassVar\n\nclass NarrowArgs:\n"
            + "".join(f"    f{i}: int = 0\n" for i in range(25))
            + "    names: ClassVar[tuple[str, ...]] = ()\n",
        },
    )
    assert wide_settings(modules) == {"jobs.a:WideSettings": 26}


def test_a_name_resolved_from_a_string_is_found(tmp_path: Path) -> None:
    modules = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "import inspect\nimport policies\n\n"
            "def f(name):\n    return inspect.signature(getattr(policies, name))\n",
            "b.py": "def g(x):\n    return x.name\n",
        },
    )
    assert name_resolutions(modules) == ["jobs.a:5 getattr", "jobs.a:5 signature"]


def test_top_level_modules_count_modules_and_subpackages(tmp_path: Path) -> None:
    _tree(tmp_path, {"__init__.py": "", "run.py": "", "rules/__init__.py": "", "rules/a.py": "", "data/x.txt": ""})
    assert top_level_modules(tmp_path / "jobs") == ["rules", "run"]
