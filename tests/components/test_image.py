"""The job image, checked without a Docker daemon (`make image` runs this, then builds where it can).

The Dockerfile is parsed into its instructions, and each promise the stack and the task
definition make about the image is held against it: every OCR engine the stack settings accept
finds what it needs in the image's apt packages, the base image is pinned, the user is numeric
and not root, TMPDIR is the scratch volume the task definition mounts on the read-only root
filesystem, and only the jobs' code and runtime requirements go in.

What goes in is computed as Docker would: the build context is the repository less what
`.dockerignore` excludes (its rules in order, the last match deciding, `!` admitting again), and the
image's files are the context's files under the Dockerfile's COPY sources. The dev stack (jobs/local,
jobs/demo) is not among them, every production package is, and every module of that file set imports
in a fresh interpreter that has nothing else of the repository and refuses the packages only
requirements-dev.txt or requirements.txt install (pulumi, moto, the boto3 stubs, pytest).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from components import job_containers
from components.settings import IngestSettings
from jobs.contract.engines import OcrEngine
from jobs.extract.ocr.tesseract import LANGUAGES
from jobs.runtime.registry import TaskStack
from tests.architecture.contracts import DEV_STACK, jobs_packages
from tests.components.program import REPO_ROOT

PYTHON_MINOR = "3.11"  # requirements pins, ruff's target-version and the README's python3.11


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        pending += " " + stripped.removesuffix("\\").strip() if pending else stripped.removesuffix("\\").strip()
        if not stripped.endswith("\\"):
            keyword, _, arguments = pending.partition(" ")
            out.append((keyword.upper(), arguments.strip()))
            pending = ""
    assert not pending, "a continuation line ends the file"
    return out


def apt_packages(parsed: list[tuple[str, str]]) -> set[str]:
    packages: set[str] = set()
    for keyword, arguments in parsed:
        if keyword != "RUN":
            continue
        for command in re.split(r"&&|;", arguments):
            words = shlex.split(command)
            if "apt-get" in words and "install" in words:
                assert "--no-install-recommends" in words, command
                packages |= {w for w in words[words.index("install") + 1 :] if not w.startswith("-")}
    return packages


# What each engine the stack may select needs inside the image. A new engine in IngestSettings
# fails test_every_selectable_engine_is_provided until it is listed here.
ENGINE_PACKAGES = {
    "textract": set(),  # an AWS API: the image needs boto3 only (requirements-jobs.txt)
    "local": {"tesseract-ocr", *(f"tesseract-ocr-{lang}" for lang in LANGUAGES.split("+"))},
    "off": set(),
}


@pytest.fixture(scope="module")
def dockerfile() -> list[tuple[str, str]]:
    return instructions((REPO_ROOT / "Dockerfile").read_text())


def _one(parsed: list[tuple[str, str]], keyword: str) -> str:
    (value,) = [a for k, a in parsed if k == keyword]
    return value


def _env(parsed: list[tuple[str, str]]) -> dict[str, str]:
    pairs = [w.split("=", 1) for k, a in parsed if k == "ENV" for w in shlex.split(a)]
    return dict(pairs)


def test_every_selectable_engine_is_provided(dockerfile: list[tuple[str, str]]) -> None:
    annotation = IngestSettings.model_fields["ocr_engine"].annotation
    assert annotation is OcrEngine  # the stack accepts exactly the engines the job knows
    selectable = {engine.value for engine in OcrEngine}
    assert selectable == set(ENGINE_PACKAGES)
    installed = apt_packages(dockerfile)
    for engine, needed in ENGINE_PACKAGES.items():
        assert needed <= installed, f"ocrEngine {engine} needs {sorted(needed - installed)}"
    assert {"tesseract-ocr-deu", "tesseract-ocr-eng"} <= installed


def test_apt_leaves_no_package_lists(dockerfile: list[tuple[str, str]]) -> None:
    (install,) = [a for k, a in dockerfile if k == "RUN" and "apt-get install" in a]
    assert "apt-get update" in install and "rm -rf /var/lib/apt/lists/*" in install


def test_base_image_is_pinned(dockerfile: list[tuple[str, str]]) -> None:
    base = _one(dockerfile, "FROM")
    # A full patch version on a named Debian release, or a digest: never a moving tag alone.
    pinned = re.fullmatch(rf"python:{re.escape(PYTHON_MINOR)}\.\d+-slim-[a-z]+(@sha256:[0-9a-f]{{64}})?", base)
    assert pinned or re.fullmatch(r"python@sha256:[0-9a-f]{64}", base), base


def test_runs_as_the_task_definitions_numeric_non_root_user(dockerfile: list[tuple[str, str]]) -> None:
    user = _one(dockerfile, "USER")
    assert user == job_containers.JOB_USER
    uid, gid = user.split(":")
    assert uid.isdigit() and gid.isdigit() and int(uid) != 0 and int(gid) != 0
    # Nothing runs after the switch: every RUN is part of building, as root, before it.
    keywords = [k for k, _ in dockerfile]
    assert max(i for i, k in enumerate(keywords) if k == "RUN") < keywords.index("USER")


def test_temporary_files_go_to_the_mounted_scratch_volume(dockerfile: list[tuple[str, str]]) -> None:
    env = _env(dockerfile)
    assert env["TMPDIR"] == job_containers.SCRATCH_PATH == env["HOME"]
    container = job_containers.container_definition(
        job="ingest",
        log_group="g",
        region="eu-west-1",
        environment=dict.fromkeys(job_containers.JOB_ENV_VARS, "x"),
        stack=TaskStack(image="i", table_arn=""),
    )
    assert container["readonlyRootFilesystem"] is True
    assert [m["containerPath"] for m in container["mountPoints"]] == [env["TMPDIR"]]


def test_only_the_jobs_and_their_requirements_go_in(dockerfile: list[tuple[str, str]]) -> None:
    copies = [a for k, a in dockerfile if k in ("COPY", "ADD")]
    assert copies == ["requirements-jobs.txt ./", "jobs/ ./jobs/"]
    assert any(k == "RUN" and "pip install --no-cache-dir -r requirements-jobs.txt" in a for k, a in dockerfile)
    assert json.loads(_one(dockerfile, "ENTRYPOINT")) == job_containers.ENTRYPOINT


def dockerignore_rules(text: str) -> list[tuple[re.Pattern[str], bool]]:
    """(pattern, admits) per rule, in order: Go's filepath.Match per path segment, `**` any depth."""
    rules = []
    for line in text.splitlines():
        rule = line.strip()
        if not rule or rule.startswith("#"):
            continue
        admits = rule.startswith("!")
        pattern = rule.removeprefix("!").strip().strip("/")
        regex = "".join(
            ".*" if part == "**" else "[^/]" if part == "?" else "[^/]*" if part == "*" else re.escape(part)
            for part in re.split(r"(\*\*|\*|\?)", pattern)
        )
        rules.append((re.compile(regex.replace(".*/", "(.*/)?")), admits))
    return rules


def excluded(path: str, rules: list[tuple[re.Pattern[str], bool]]) -> bool:
    """Whether Docker leaves `path` out: the last rule matching it or a folder above it decides."""
    parents = [str(p) for p in reversed(PurePosixPath(path).parents) if str(p) != "."] + [path]
    verdict = False
    for pattern, admits in rules:
        if any(pattern.fullmatch(p) for p in parents):
            verdict = not admits
    return verdict


def build_context(root: Path) -> set[str]:
    """The files Docker sends: every file of `root` that `.dockerignore` does not exclude."""
    rules = dockerignore_rules((root / ".dockerignore").read_text())
    admitted = [rule.removeprefix("!").strip("/") for rule, admits in _raw_rules(root) if admits]
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        here = Path(folder).relative_to(root)
        # An excluded folder that no `!` rule reaches into holds nothing of the context.
        dirs[:] = [
            d
            for d in dirs
            if not excluded((here / d).as_posix(), rules) or any(a.startswith((here / d).as_posix()) for a in admitted)
        ]
        found |= {(here / f).as_posix() for f in files if not excluded((here / f).as_posix(), rules)}
    return found


def _raw_rules(root: Path) -> list[tuple[str, bool]]:
    lines = [line.strip() for line in (root / ".dockerignore").read_text().splitlines()]
    return [(line, line.startswith("!")) for line in lines if line and not line.startswith("#")]


def image_files(dockerfile: list[tuple[str, str]]) -> set[str]:
    """The context's files the Dockerfile's COPY instructions take (a folder source: all below it)."""
    sources = [a.split()[0].rstrip("/") for k, a in dockerfile if k == "COPY"]
    context = build_context(REPO_ROOT)
    return {f for f in context if any(f == s or f.startswith(s + "/") for s in sources)}


def test_dockerignore_admits_only_the_image_inputs() -> None:
    rules = _raw_rules(REPO_ROOT)
    assert rules[0] == ("*", False)
    assert {r for r, admits in rules if admits} == {"!requirements-jobs.txt", "!jobs/"}


def test_the_image_carries_production_code_and_not_the_dev_stack(dockerfile: list[tuple[str, str]]) -> None:
    files = image_files(dockerfile)
    children = {PurePosixPath(f).parts[1].removesuffix(".py") for f in files if f.startswith("jobs/")}
    packages = {f"jobs.{c}" for c in children - {"__init__"}}
    assert packages == jobs_packages() - set(DEV_STACK)
    assert not [f for f in files if f.startswith(("jobs/local/", "jobs/demo/"))]
    assert not [f for f in files if "__pycache__" in f or f.endswith(".pyc")]
    # Not a folder-level accident: the modules and data files of a production package all go in.
    assert {f for f in build_context(REPO_ROOT) if f.startswith("jobs/extract/")} == {
        p.relative_to(REPO_ROOT).as_posix()
        for p in (REPO_ROOT / "jobs" / "extract").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert "requirements-jobs.txt" in files and "Dockerfile" not in files and "tests/conftest.py" not in files


def test_the_dockerignore_reader_follows_dockers_rules() -> None:
    rules = dockerignore_rules("*\n!jobs/\njobs/local/\n**/__pycache__\n!jobs/local/keep.py\n")
    assert not excluded("jobs/ingest/run.py", rules)
    assert excluded("jobs/local/stack.py", rules) and not excluded("jobs/local/keep.py", rules)
    assert excluded("jobs/ingest/__pycache__/run.cpython-311.pyc", rules) and excluded("__pycache__/x.pyc", rules)
    assert excluded("tests/conftest.py", rules) and excluded("README.md", rules)


# What requirements-jobs.txt does not install: a module of the image that imports one fails in it.
NOT_IN_IMAGE = ("pulumi", "pulumi_aws", "moto", "pytest", "hypothesis", "yaml", "mypy_boto3_", "botocore_stubs")

_IMPORT_ALL = """
import importlib, importlib.abc, importlib.machinery, pkgutil, sys
REFUSED = {refused!r}

class Refuse(importlib.abc.Loader):
    def create_module(self, spec):
        raise ImportError(f"{{spec.name}} is not installed in the job image")

    def exec_module(self, module):
        pass

class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in REFUSED or any(top.startswith(p) for p in REFUSED if p.endswith("_")):
            return importlib.machinery.ModuleSpec(name, Refuse())
        return None

sys.meta_path.insert(0, Blocker())
import jobs
assert jobs.__path__ == [{app!r} + "/jobs"], jobs.__path__
names = ["jobs"] + [m.name for m in pkgutil.walk_packages(jobs.__path__, "jobs.") if m.name != "jobs.__main__"]
for name in names:
    importlib.import_module(name)
print(len(names))
"""


def test_every_module_of_the_image_imports_without_the_dev_stack(
    dockerfile: list[tuple[str, str]], tmp_path: Path
) -> None:
    app = tmp_path / "app"
    files = image_files(dockerfile)
    for name in files:
        (app / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / name, app / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BOTOCORE_EXPERIMENTAL__PLUGINS")}
    code = _IMPORT_ALL.format(refused=NOT_IN_IMAGE, app=str(app))
    # -P: not the current folder on sys.path (it would be the repository's, with the dev stack).
    run = [sys.executable, "-P", "-c", code]
    done = subprocess.run(
        run, cwd=app, env={**env, "PYTHONPATH": str(app)}, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout) == len([f for f in files if f.endswith(".py")]) - 1  # each module but __main__
    # A developer command in the image says what it is instead of a traceback.
    local = [sys.executable, "-P", "-m", "jobs", "local", "status"]
    said = subprocess.run(
        local, cwd=app, env={**env, "PYTHONPATH": str(app)}, capture_output=True, text=True, timeout=60
    )
    assert said.returncode == 2 and "not in this image" in said.stderr, said.stderr[-2000:]


def test_the_parser_sees_a_missing_engine() -> None:
    # The same checks on a Dockerfile without tesseract must fail, or they prove nothing.
    bare = instructions(
        "FROM python:3.11.14-slim-bookworm\nRUN apt-get update && apt-get install -y --no-install-recommends curl\n"
    )
    assert not ENGINE_PACKAGES["local"] <= apt_packages(bare)
