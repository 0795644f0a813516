"""The architecture's promises, checked.

- Pure modules (contract, planning, rules, extraction with OCR, the Pulumi program's policies and
  settings) import in a fresh interpreter whose import system refuses boto3, botocore, pulumi and
  pulumi_aws, so a module that reaches one of them, directly or through another, fails here.
- Only the store adapters (and the local stack, which starts the emulators) import an AWS SDK.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BLOCKED = ("boto3", "botocore", "pulumi", "pulumi_aws")
PURE_MODULES = (
    "components.policies",
    "components.recovery_policies",
    "components.settings",
    "components.catalog",
    "jobs.settings",
    "jobs.errors",
    "jobs.contract",
    "jobs.contract.events",
    "jobs.contract.schema",
    "jobs.ingest.plan",
    "jobs.reconcile.frames",
    "jobs.reconcile.params",
    "jobs.reconcile.keys",
    "jobs.reconcile.join",
    "jobs.reconcile.rules",
    "jobs.reconcile.findings",
    "jobs.reconcile.sql",
    "jobs.reconcile.engines",
    "jobs.contract.audit",
    "jobs.audit.sql",
    "jobs.recovery.plan",
    "jobs.recovery.rollback",
    "jobs.recovery.report",
)
PURE_PACKAGES = ("jobs.extract",)  # every module below them
AWS_SPEAKERS = ("jobs/store/", "jobs/local/")

_PROBE = textwrap.dedent(
    """
    import importlib, importlib.abc, importlib.machinery, pkgutil, sys
    BLOCKED = {blocked!r}

    class Refuse(importlib.abc.Loader):
        def create_module(self, spec):
            raise ImportError(f"{{spec.name}} is blocked: this module must stay pure")

        def exec_module(self, module):
            pass

    class Blocker(importlib.abc.MetaPathFinder):
        # A spec that fails to load, rather than no spec: a package probing for optional ones
        # (polars asks importlib.util.find_spec("boto3")) still imports; loading them fails.
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                return importlib.machinery.ModuleSpec(name, Refuse())
            return None

    sys.meta_path.insert(0, Blocker())
    names = list({modules!r})
    for package in {packages!r}:
        root = importlib.import_module(package)
        names += [package] + [m.name for m in pkgutil.walk_packages(root.__path__, package + ".")]
    for name in names:
        importlib.import_module(name)
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    assert not loaded, loaded
    print(len(names))
    """
)


def _probe(modules: tuple[str, ...], packages: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    code = _PROBE.format(blocked=BLOCKED, modules=modules, packages=packages)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False
    )


def test_pure_modules_import_with_aws_and_pulumi_blocked() -> None:
    done = _probe(PURE_MODULES, PURE_PACKAGES)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.strip()) >= len(PURE_MODULES) + 20  # the extraction readers and OCR were walked


@pytest.mark.parametrize("module", ["components.batch_jobs", "jobs.store.clients", "jobs.store.textract"])
def test_the_probe_catches_a_module_that_needs_them(module: str) -> None:
    done = _probe((module,))  # or it proves nothing
    assert done.returncode != 0 and "is blocked: this module must stay pure" in done.stderr


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_only_the_store_and_the_local_stack_import_aws_sdks() -> None:
    offenders = [
        str(path.relative_to(REPO_ROOT))
        for path in sorted((REPO_ROOT / "jobs").rglob("*.py"))
        if not str(path.relative_to(REPO_ROOT)).startswith(AWS_SPEAKERS) and _imports(path) & {"boto3", "botocore"}
    ]
    assert offenders == []
