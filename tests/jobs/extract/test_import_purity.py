"""Extraction (OCR included) is pure: every module under jobs.extract imports with AWS and Pulumi blocked."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]

_PROBE = textwrap.dedent("""
    import importlib, pkgutil, sys

    BLOCKED = ("boto3", "botocore", "pulumi")

    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{name} is blocked: extraction must not reach AWS or Pulumi")
            return None

    sys.meta_path.insert(0, Block())
    import jobs.extract
    names = ["jobs.extract"] + [m.name for m in pkgutil.walk_packages(jobs.extract.__path__, "jobs.extract.")]
    for name in names:
        importlib.import_module(name)
    jobs.extract.extract_document(b"<x/>", "probe.xml")
    print(len(names))
""")


def test_every_extraction_module_imports_without_boto3_botocore_or_pulumi() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) >= 20  # the readers and the OCR modules were all walked


def test_the_probe_can_fail() -> None:
    leaky = _PROBE.replace("import jobs.extract\n", "import jobs.extract\nimport jobs.store.textract\n", 1)
    done = subprocess.run([sys.executable, "-c", leaky], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    assert done.returncode != 0 and "botocore is blocked" in done.stderr
