"""The job image, checked without a Docker daemon (`make image` runs this, then builds where it can).

The Dockerfile is parsed into its instructions, and each promise the stack and the task
definition make about the image is held against it: every OCR engine the stack settings accept
finds what it needs in the image's apt packages, the base image is pinned, the user is numeric
and not root, TMPDIR is the scratch volume the task definition mounts on the read-only root
filesystem, and only the jobs' code and runtime requirements go in.
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

from components import batch_jobs
from components.settings import StackSettings
from jobs.contract.engines import OcrEngine
from jobs.extract.ocr.tesseract import LANGUAGES
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


# What each engine the stack may select needs inside the image. A new engine in StackSettings
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
    annotation = StackSettings.model_fields["ocr_engine"].annotation
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
    assert user == batch_jobs.JOB_USER
    uid, gid = user.split(":")
    assert uid.isdigit() and gid.isdigit() and int(uid) != 0 and int(gid) != 0
    # Nothing runs after the switch: every RUN is part of building, as root, before it.
    keywords = [k for k, _ in dockerfile]
    assert max(i for i, k in enumerate(keywords) if k == "RUN") < keywords.index("USER")


def test_temporary_files_go_to_the_mounted_scratch_volume(dockerfile: list[tuple[str, str]]) -> None:
    env = _env(dockerfile)
    assert env["TMPDIR"] == batch_jobs.SCRATCH_PATH == env["HOME"]
    container = batch_jobs.container_definition(
        job="ingest",
        image="i",
        log_group="g",
        region="eu-west-1",
        environment=dict.fromkeys(batch_jobs.JOB_ENV_VARS, "x"),
    )
    assert container["readonlyRootFilesystem"] is True
    assert [m["containerPath"] for m in container["mountPoints"]] == [env["TMPDIR"]]


def test_only_the_jobs_and_their_requirements_go_in(dockerfile: list[tuple[str, str]]) -> None:
    copies = [a for k, a in dockerfile if k in ("COPY", "ADD")]
    assert copies == ["requirements-jobs.txt ./", "jobs/ ./jobs/"]
    assert any(k == "RUN" and "pip install --no-cache-dir -r requirements-jobs.txt" in a for k, a in dockerfile)
    assert json.loads(_one(dockerfile, "ENTRYPOINT")) == batch_jobs.ENTRYPOINT


def test_dockerignore_admits_only_the_image_inputs() -> None:
    rules = [
        line.strip()
        for line in (REPO_ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert rules[0] == "*"
    assert {r for r in rules if r.startswith("!")} == {"!requirements-jobs.txt", "!jobs/"}


def test_the_parser_sees_a_missing_engine() -> None:
    # The same checks on a Dockerfile without tesseract must fail, or they prove nothing.
    bare = instructions(
        "FROM python:3.11.14-slim-bookworm\nRUN apt-get update && apt-get install -y --no-install-recommends curl\n"
    )
    assert not ENGINE_PACKAGES["local"] <= apt_packages(bare)
