"""What the Pulumi program loads of the jobs, as Python really loads it: every module of
`components` imported in a fresh interpreter, then every `jobs` module in sys.modules checked.

import-linter reads each module's imports but not that importing `jobs.ingest.job` first runs
`jobs/ingest/__init__.py`: a package that re-exported its logic would put the store, boto3 or
polars in the stack's process behind the `components` contract's back. Here the packages' own
modules count like any other: the program may load the contract, the settings, the errors below
them, what a declaration is (`jobs.runtime.registry`), the registry, and each job package's
`job.py` and `policy.py` with the package itself, and nothing else.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.architecture.contracts import REPO_ROOT

ALLOWED = re.compile(
    r"jobs(\.(errors|settings(\.\w+)?|registry|runtime|runtime\.registry|contract(\..+)?|\w+\.(job|policy)))?"
)
# Third-party packages a job's logic would bring: none of them is the stack's to load.
HEAVY = ("boto3", "botocore", "polars", "duckdb", "pyarrow")

_PROBE = textwrap.dedent(
    """
    import importlib, json, pkgutil, sys
    import components
    for module in pkgutil.walk_packages(components.__path__, "components."):
        importlib.import_module(module.name)
    print(json.dumps(sorted(sys.modules)))
    """
)


def loaded_by_components(root: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=root, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    modules: list[str] = json.loads(done.stdout)
    return modules


def outside_the_declarations(modules: list[str]) -> list[str]:
    """The loaded modules the program may not load: a job package itself only as the parent of its
    declaration (which runs its `__init__`), nothing else of it.
    """
    parents = {m.rsplit(".", 1)[0] for m in modules if ALLOWED.fullmatch(m) and m.endswith((".job", ".policy"))}
    jobs = [m for m in modules if m.split(".")[0] == "jobs" and not (ALLOWED.fullmatch(m) or m in parents)]
    return jobs + [m for m in modules if m.split(".")[0] in HEAVY]


def test_the_components_load_only_the_jobs_declarations() -> None:
    modules = loaded_by_components(REPO_ROOT)
    assert "jobs.registry" in modules and "jobs.ingest.policy" in modules  # the walk reached them
    assert outside_the_declarations(modules) == []


def test_a_package_that_reexports_its_logic_is_caught(tmp_path: Path) -> None:
    for folder in ("jobs", "components"):
        shutil.copytree(REPO_ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    init = tmp_path / "jobs" / "erasure" / "__init__.py"
    init.write_text(init.read_text() + "\nfrom jobs.erasure.run import ErasureRun  # noqa: F401\n")
    found = outside_the_declarations(loaded_by_components(tmp_path))
    assert "jobs.erasure.run" in found and "boto3" in found
