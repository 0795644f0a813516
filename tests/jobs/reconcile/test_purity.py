"""The reconcile's pure modules import with boto3, botocore and pulumi blocked; twins agree."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobs.contract import DocumentItem, bare_etag
from jobs.reconcile import rules

BLOCKER = """
import importlib.abc, importlib.machinery, sys
class Refuse(importlib.abc.Loader):
    def create_module(self, spec):
        raise ImportError(f'{spec.name} is blocked: this module must stay pure')
    def exec_module(self, module):
        pass
class Block(importlib.abc.MetaPathFinder):
    # A spec whose loading fails: probes for optional packages (polars makes some) still work.
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('boto3', 'botocore', 'pulumi', 'pulumi_aws'):
            return importlib.machinery.ModuleSpec(name, Refuse())
sys.meta_path.insert(0, Block())
import {module}
assert not any(m.split('.')[0] in ('boto3', 'botocore', 'pulumi') for m in sys.modules), 'an SDK was loaded'
"""


@pytest.mark.parametrize("module", ["jobs.reconcile.rules", "jobs.reconcile.findings", "jobs.reconcile.sql"])
def test_pure_modules_import_without_aws_or_pulumi(module: str) -> None:
    done = subprocess.run([sys.executable, "-c", BLOCKER.replace("{module}", module)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


def test_no_module_of_the_reconcile_imports_aws_sdks() -> None:
    """AWS errors reach the reconcile as jobs.errors domain errors (translated in jobs.store)."""
    package = Path(rules.__file__).parent
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not [n for n in names if n.split(".")[0] in ("boto3", "botocore")], (path.name, names)


def test_item_schema_is_a_projection_of_the_contract() -> None:
    for column, attribute in rules.ITEM_ATTRIBUTE_OF.items():
        if column not in rules.KEY_COLUMNS:
            assert attribute in DocumentItem.model_fields, attribute
    assert rules.NUMERIC_ITEM_COLUMNS == {"version", "attempts", "totalAmount"}
    assert rules.ITEMS_SCHEMA["version"] == pl.Int64 and rules.ITEMS_SCHEMA["totalAmount"] == pl.String


@given(st.text(alphabet='"ab\' ', max_size=8))
def test_vectorised_unquoting_is_bare_etag(etag: str) -> None:
    assert pl.select(rules.unquoted(pl.lit(etag))).item() == bare_etag(etag)
