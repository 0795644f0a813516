"""The pure modules import with the AWS SDK and Pulumi absent: policies, settings and the contract.

Each check runs in a fresh interpreter whose import system refuses pulumi, pulumi_aws, boto3 and
botocore (a meta_path finder raising ImportError), so a module that reaches one of them, directly
or through another module, fails here instead of silently loading the SDK.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.components.program import REPO_ROOT

BLOCKED = ("pulumi", "pulumi_aws", "boto3", "botocore")
# Pure by design: the Pulumi program's policy and settings builders, and what they import.
PURE_MODULES = (
    "components.policies",
    "components.settings",
    "components.catalog",
    "jobs.settings",
    "jobs.contract",
    "jobs.contract.layout",
    "jobs.contract.schema",
)

_BLOCKER = textwrap.dedent(
    """
    import importlib, importlib.abc, sys
    BLOCKED = {blocked!r}

    class Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{{name}} is blocked: this module must stay pure")
            return None

    sys.meta_path.insert(0, Blocker())
    for module in {modules!r}:
        importlib.import_module(module)
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    assert not loaded, loaded
    """
)


def _import_blocked(*modules: str) -> subprocess.CompletedProcess[str]:
    code = _BLOCKER.format(blocked=BLOCKED, modules=modules)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False
    )


def test_pure_modules_import_without_pulumi_boto3_or_botocore() -> None:
    result = _import_blocked(*PURE_MODULES)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("module", ["components.batch_jobs", "jobs.store.clients"])
def test_the_blocker_catches_a_module_that_needs_them(module: str) -> None:
    # The same check on modules that do need Pulumi or boto3 must fail, or it proves nothing.
    result = _import_blocked(module)
    assert result.returncode != 0
    assert "is blocked: this module must stay pure" in result.stderr
