"""The architecture's promises import-linter cannot check, and import-linter's own run.

- `make lint` runs `lint-imports` over `.importlinter`; the test here runs it too, so `make test`
  sees a broken contract, and proves each contract can fail on a tree that breaks it.
- The `pure` contract's modules import in a fresh interpreter whose import system refuses boto3,
  botocore, pulumi and pulumi_aws: import-linter sees our imports, not a third-party package that
  imports an SDK behind our back, nor an import hidden from the source (importlib).
- The contracts' hand-written lists keep up with the tree: every package of jobs/ is a source of the
  SDK and dev-stack contracts unless it is the store or the dev stack, and every boto3 stub package
  requirements-dev.txt installs is forbidden outside the store.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.architecture.contracts import (
    DEV_STACK,
    REPO_ROOT,
    contract,
    contract_names,
    entries,
    jobs_packages,
    layer_names,
    pure_targets,
    stub_packages,
)

BLOCKED = ("boto3", "botocore", "pulumi", "pulumi_aws")

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
    modules, packages = pure_targets()
    assert {"jobs.extract", "jobs.contract"} <= set(packages)
    done = _probe(modules, packages)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.strip()) >= len(modules) + 40  # the contract, the extraction readers and OCR were walked


@pytest.mark.parametrize("module", ["components.batch_jobs", "jobs.store.clients", "jobs.store.textract"])
def test_the_probe_catches_a_module_that_needs_them(module: str) -> None:
    done = _probe((module,))  # or it proves nothing
    assert done.returncode != 0 and "is blocked: this module must stay pure" in done.stderr


def lint_imports(root: Path) -> dict[str, bool]:
    """Run import-linter over the tree at `root`: {contract name: kept}."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True))",
        ],
        cwd=root,
        env={**os.environ, "COLUMNS": "1000", "NO_COLOR": "1", "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    verdicts = {
        m["name"]: m["verdict"] == "KEPT"
        for m in re.finditer(r"^(?P<name>.+) (?P<verdict>KEPT|BROKEN)( \(\d+ ignored imports?\))?$", done.stdout, re.M)
    }
    assert verdicts, done.stdout[-3000:] + done.stderr[-3000:]
    return verdicts


def test_every_import_contract_is_kept() -> None:
    verdicts = lint_imports(REPO_ROOT)
    assert set(verdicts) == contract_names()
    assert [name for name, kept in verdicts.items() if not kept] == [], "run `lint-imports` to see the chains"


def test_each_contract_fails_on_a_tree_that_breaks_it(tmp_path: Path) -> None:
    for folder in ("jobs", "components"):
        shutil.copytree(REPO_ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / ".importlinter", tmp_path)
    # The contract types that read the registry, which .importlinter names.
    (tmp_path / "tests" / "architecture").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "tests" / "architecture" / "registry_contracts.py", tmp_path / "tests" / "architecture")
    breaches = {
        "jobs/extract/breach.py": "import boto3\n",  # pure and sdk
        "jobs/ingest/breach.py": "def f():\n    from jobs.review import desk\n",  # layers: jobs are independent
        "jobs/erasure/breach.py": "import jobs.demo\n",  # production, layers
        "jobs/store/breach.py": "import pulumi\n",  # pulumi
        "components/breach.py": "from jobs.ingest import plan\n",  # components
        "jobs/contract/breach_a.py": "from jobs.contract import breach_b\n",  # acyclic, through a TYPE_CHECKING import
        "jobs/contract/breach_b.py": "import typing\nif typing.TYPE_CHECKING:\n    import jobs.contract.breach_a\n",
    }
    for path, text in breaches.items():
        (tmp_path / path).write_text(text)
    verdicts = lint_imports(tmp_path)
    assert set(verdicts) == contract_names()
    assert [name for name, kept in verdicts.items() if kept] == []


def test_every_package_is_placed_in_the_contracts() -> None:
    production = jobs_packages() - set(DEV_STACK)
    assert jobs_packages() <= layer_names()
    assert set(entries(contract("production")["source_modules"])) == production | {"components"}
    assert set(entries(contract("sdk")["source_modules"])) == production - {"jobs.store"} | {"components"}
    forbidden_to_components = set(entries(contract("components")["forbidden_modules"]))
    assert forbidden_to_components == jobs_packages() - {
        "jobs.errors",
        "jobs.contract",
        "jobs.settings",
        "jobs.runtime",
        "jobs.registry",
    }


def test_every_boto3_stub_is_forbidden_outside_the_store() -> None:
    forbidden = set(entries(contract("sdk")["forbidden_modules"]))
    assert stub_packages() and stub_packages() <= forbidden
    assert forbidden - stub_packages() == {"boto3", "botocore"}


def test_every_public_name_a_package_declares_exists() -> None:
    """`__all__` is each package's public front: every name in it is there (or a module of it)."""
    import jobs

    missing = []
    packages = ["jobs"] + [m.name for m in pkgutil.walk_packages(jobs.__path__, "jobs.") if m.ispkg]
    for name in packages:
        package = importlib.import_module(name)
        missing += [
            f"{name}.{public}"
            for public in getattr(package, "__all__", ())
            if not hasattr(package, public) and importlib.util.find_spec(f"{name}.{public}") is None
        ]
    assert missing == []
