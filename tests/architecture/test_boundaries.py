"""The architecture's promises, checked: pure modules import without AWS or Pulumi, and only the
store adapters (and the local stack, which starts servers) speak AWS."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BLOCKED = ("boto3", "botocore", "pulumi", "pulumi_aws")
PURE_MODULES = (
    "jobs.contract",
    "jobs.contract.events",
    "jobs.contract.schema",
    "jobs.ingest.plan",
    "jobs.settings",
    "jobs.errors",
)
# Where boto3/botocore may be imported: the adapters, and the local stack that starts emulators.
AWS_SPEAKERS = ("jobs/store/", "jobs/local/")

_BLOCKER = """
import importlib, importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError(f"{{name}} is blocked: this module must stay pure")
sys.meta_path.insert(0, Block())
for module in {modules!r}:
    importlib.import_module(module)
"""


@pytest.mark.parametrize("module", PURE_MODULES)
def test_pure_modules_import_with_aws_and_pulumi_blocked(module: str) -> None:
    code = _BLOCKER.format(blocked=BLOCKED, modules=(module,))
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-1500:]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = set()
    for node in ast.walk(tree):
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
