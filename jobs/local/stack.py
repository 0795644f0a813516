"""`local up | down | status`: run the emulators, bootstrap them, and describe how to reach them.

State (pids, ports) lives in `.local/stack.json` so `down` stops only what `up` started.
Both servers keep their data in memory: `down` discards the table, the buckets and the queue
together, and the next `up` starts from an empty, consistent stack. (When DynamoDB kept its data
on disk and moto's S3 did not, a restart left items pointing at objects that were gone, and a
reconcile reported findings nobody had caused.) moto's server also answers SQS on the S3 port.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

from jobs.contract import audit_data_spec, bucket_specs, layout, queue_spec, table_spec
from jobs.contract.engines import OcrEngine
from jobs.contract.schema import audit_bucket_spec
from jobs.contract.signing import signing_key_spec
from jobs.errors import LocalStackError
from jobs.local import servers
from jobs.local.bootstrap import bootstrap, ensure_signing_key
from jobs.local.standins import exports as exports_standin
from jobs.settings import ENV_AUDIT_BUCKET, ENV_OCR_ENGINE, ENV_REPORT_SIGNING_KEY, ENV_TABLE_ARN, JobSettings
from jobs.store.clients import botocore_config

REGION = "us-east-1"
DUMMY_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}
ENV_LOCAL_DIR = "DOCUFLOW_LOCAL_DIR"
ENV_DYNAMODB_PORT = "DOCUFLOW_DYNAMODB_PORT"
ENV_S3_PORT = "DOCUFLOW_S3_PORT"
# The frontend origins that may read result.json from a browser (comma-separated; on AWS the
# stack's docuflow:corsOrigins): by default a frontend dev server on this machine.
ENV_CORS_ORIGINS = "DOCUFLOW_CORS_ORIGINS"
LOCAL_CORS_ORIGINS = ("http://localhost:5173",)
LOCAL_OCR_ENGINE = OcrEngine.LOCAL  # no Textract on the embedded stack


STANDINS_DIR = "standins"
PERSISTENCE = "memory"  # what `local status` reports: neither server keeps data across restarts
AUDIT_PIPE = "audit-pipe"  # the state entry of the audit stand-in's process
AUDIT_STAGES_DIR = "audit-stages"  # each stage `up` brought up on the servers: the audit stand-in logs them all


@dataclass(frozen=True)
class Endpoints:
    dynamodb: str
    s3: str

    @property
    def sqs(self) -> str:
        """Moto in server mode answers every service it emulates on one port."""
        return self.s3

    def aws_env(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL_DYNAMODB": self.dynamodb,
            # DynamoDB Local answers the Streams API on its own port (boto3's service id
            # `dynamodbstreams`, whose endpoint variable is AWS_ENDPOINT_URL_DYNAMODB_STREAMS).
            "AWS_ENDPOINT_URL_DYNAMODB_STREAMS": self.dynamodb,
            "AWS_ENDPOINT_URL_S3": self.s3,
            "AWS_ENDPOINT_URL_SQS": self.sqs,
            # moto's server also answers KMS (the reports' signing key) and SNS (their notice).
            "AWS_ENDPOINT_URL_KMS": self.s3,
            "AWS_ENDPOINT_URL_SNS": self.s3,
            "AWS_ENDPOINT_URL_CLOUDWATCH": self.s3,  # and CloudWatch (the runs' metrics)
            "AWS_ENDPOINT_URL_STS": self.s3,  # and STS (who records an acknowledgement)
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            **DUMMY_CREDENTIALS,
        }


@contextmanager
def ephemeral(
    log_dir: Path, s3_spec: Callable[[int, Path], servers.ServerSpec] = servers.s3_spec
) -> Iterator[Endpoints]:
    """Fresh in-memory DynamoDB Local and moto S3 on free ports, stopped on exit.

    For test sessions and benchmarks: a new engine each time, since DynamoDB Local slows down on
    new stream-enabled tables once a process has accumulated many stream records. `s3_spec`
    lets a benchmark start an S3 server that comes up already seeded.
    """
    specs = [
        servers.dynamodb_spec(servers.free_port(), None, log_dir),
        s3_spec(servers.free_port(), log_dir),
    ]
    processes = [servers.start(spec) for spec in specs]
    try:
        for spec, process in zip(specs, processes, strict=True):
            servers.wait_until_ready(spec, process)
        yield Endpoints(dynamodb=specs[0].endpoint, s3=specs[1].endpoint)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def state_dir() -> Path:
    return Path(os.environ.get(ENV_LOCAL_DIR) or servers.REPO_ROOT / ".local")


def _state_file() -> Path:
    return state_dir() / "stack.json"


def _read_state() -> dict[str, dict[str, Any]]:
    path = _state_file()
    return json.loads(path.read_text()) if path.exists() else {}


def cors_origins() -> tuple[str, ...]:
    configured = os.environ.get(ENV_CORS_ORIGINS)
    if configured is None:
        return LOCAL_CORS_ORIGINS
    return tuple(o.strip() for o in configured.split(",") if o.strip())


def bootstrap_endpoints(
    endpoints: Endpoints, settings: JobSettings, origins: tuple[str, ...] | None = None, *, signing: bool = False
) -> JobSettings:
    """Create the stage's resources; returns the settings completed with the arrival queue URL.
    `origins`: the frontend origins of the processed bucket's CORS rules (default: cors_origins()).
    `signing`: also the report signing key, named in the settings by its ARN (`local up` always; tests
    that need no signed reports leave it off, as a stack without the key would be).
    """
    session = boto3.session.Session(aws_access_key_id="local", aws_secret_access_key="local", region_name=REGION)
    config = botocore_config(settings)
    url = bootstrap(
        session.client("dynamodb", endpoint_url=endpoints.dynamodb, config=config),
        session.client("s3", endpoint_url=endpoints.s3, config=config),
        session.client("sqs", endpoint_url=endpoints.sqs, config=config),
        table_spec(settings.stage),
        [
            *bucket_specs(
                settings.stage,
                settings.store.bucket_names(),
                settings.store.lifecycle(),
                cors_origins() if origins is None else origins,
            ),
            audit_bucket_spec(settings.stage, layout.AUDIT_LOG),
            audit_data_spec(settings.stage),
        ],
        queue_spec(settings.stage),
        REGION,
    )
    update: dict[str, object] = {"arrivals_queue_url": url}
    if signing:
        kms = session.client("kms", endpoint_url=endpoints.s3, config=config)  # moto's server answers KMS
        # The jobs get the key's ARN, as the stack's task definitions do: an alias is no identity.
        alias = ensure_signing_key(kms, signing_key_spec(settings.stage))
        update["report_signing_key"] = kms.describe_key(KeyId=alias)["KeyMetadata"]["Arn"]
    return settings.changed(**update)


def up(settings: JobSettings) -> tuple[Endpoints, JobSettings, dict[str, object]]:
    """Start what is not running, wait for both servers, bootstrap; returns endpoints, the
    completed settings and timings.
    """
    started = time.monotonic()
    state = _read_state()
    specs: dict[str, Callable[[int], servers.ServerSpec]] = {
        "dynamodb": lambda port: servers.dynamodb_spec(port, None, state_dir()),
        "s3": lambda port: servers.s3_spec(port, state_dir()),
    }
    defaults = {"dynamodb": ENV_DYNAMODB_PORT, "s3": ENV_S3_PORT}
    fallback = {"dynamodb": 18000, "s3": 15000}
    endpoints: dict[str, str] = {}
    for name, make in specs.items():
        known = state.get(name)
        if known and servers.answers(f"http://127.0.0.1:{known['port']}"):
            endpoints[name] = f"http://127.0.0.1:{known['port']}"
            continue
        port = int(os.environ.get(defaults[name]) or fallback[name])
        if servers.answers(f"http://127.0.0.1:{port}"):
            raise LocalStackError(f"port {port} is taken by another program: set {defaults[name]} to a free port")
        spec = make(port)
        state_dir().mkdir(parents=True, exist_ok=True)
        process = servers.start(spec)
        servers.wait_until_ready(spec, process)
        state[name] = {"pid": process.pid, "port": port}
        endpoints[name] = spec.endpoint
    ready = Endpoints(**endpoints)
    completed = bootstrap_endpoints(ready, settings, signing=True)  # local reports are signed, as on AWS
    # Registered before the stand-in starts or while it runs: either way it logs this stage too.
    stages = _register_audit_stage(completed)
    known = state.get(AUDIT_PIPE)
    pid = known["pid"] if known and servers.alive(known["pid"]) else _start_audit_pipe(ready, completed).pid
    state[AUDIT_PIPE] = {"pid": pid, "stages": stages}
    _state_file().write_text(json.dumps(state, indent=2))
    return ready, completed, {"seconds": round(time.monotonic() - started, 2)}


def _audit_status_file() -> Path:
    return state_dir() / "audit-pipe.json"


def _audit_stages_dir() -> Path:
    return state_dir() / AUDIT_STAGES_DIR


def _register_audit_stage(settings: JobSettings) -> list[str]:
    """Tell the audit stand-in about the stage (its settings, as a job reads them); returns every
    stage registered. Written in one step, so the stand-in never reads half a registration.
    """
    directory = _audit_stages_dir()
    directory.mkdir(parents=True, exist_ok=True)
    env = {**settings.env(), ENV_AUDIT_BUCKET: settings.audit.audit_bucket}
    partial = directory / f"{settings.stage}.tmp"
    partial.write_text(json.dumps(env))
    partial.replace(directory / f"{settings.stage}.json")
    return sorted(path.stem for path in directory.glob("*.json"))


def _start_audit_pipe(endpoints: Endpoints, settings: JobSettings) -> subprocess.Popen[bytes]:
    """The stand-in of the audit Pipe and Firehose (jobs/local/standins/audit_pipe.py): the stage,
    and every stage a later `up` registers on these servers.
    """
    command = [
        sys.executable,
        "-m",
        "jobs.local.standins.audit_pipe",
        "--status",
        str(_audit_status_file()),
        "--stages",
        str(_audit_stages_dir()),
    ]
    with (state_dir() / "audit-pipe.log").open("ab") as log:
        return subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=servers.REPO_ROOT,
            env={**os.environ, **job_env(endpoints, settings)},
        )


def flush_audit(timeout: float = 60.0) -> dict[str, object]:
    """Ask the running audit stand-in to deliver everything now; returns its counters after."""
    info = _read_state().get(AUDIT_PIPE)
    if not info or not servers.alive(info["pid"]):
        raise LocalStackError("the audit pipe stand-in is not running: `python -m jobs local up` starts it")
    asked = time.time()
    os.kill(info["pid"], signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        path = _audit_status_file()
        done = json.loads(path.read_text()) if path.exists() else {}
        if done.get("flushedAt", 0) >= asked:
            return done
        time.sleep(0.1)
    raise LocalStackError(f"the audit pipe stand-in did not flush within {timeout:.0f}s")


def down() -> list[str]:
    state = _read_state()
    stopped = []
    # The audit stand-in first: it delivers what it holds while the servers still answer.
    for name, info in sorted(state.items(), key=lambda entry: entry[0] != AUDIT_PIPE):
        servers.stop_pid(info["pid"])
        stopped.append(f"{name} (pid {info['pid']})")
    _state_file().unlink(missing_ok=True)
    # The stand-ins' clocks and stages belong to the data just discarded (jobs.local.standins).
    shutil.rmtree(state_dir() / STANDINS_DIR, ignore_errors=True)
    shutil.rmtree(_audit_stages_dir(), ignore_errors=True)
    return stopped


def status() -> dict[str, dict[str, object]]:
    def probe(info: dict[str, object]) -> dict[str, object]:
        if "port" in info:
            return {"answers": servers.answers(f"http://127.0.0.1:{info['port']}"), "data": PERSISTENCE}
        return {"running": servers.alive(int(str(info["pid"])))}

    return {name: {**info, **probe(info)} for name, info in _read_state().items()}


def job_env(endpoints: Endpoints, settings: JobSettings) -> dict[str, str]:
    """What a job needs to run on the embedded stack: endpoints, dummy credentials, settings, the
    local OCR engine (there is no Textract here) and the table's exports made by the stand-in
    (DynamoDB Local has none; botocore attaches it to every DynamoDB client as a client plugin),
    with the table's ARN they are asked for, and the report signing key when the stage has one.
    """
    return {
        **endpoints.aws_env(),
        **settings.env(),
        ENV_OCR_ENGINE: LOCAL_OCR_ENGINE,
        exports_standin.PLUGIN_ENV: exports_standin.PLUGIN,
        ENV_TABLE_ARN: local_table_arn(settings.store.table_name),
        # The report signing key `up` bootstrapped, by its ARN, as the stack's task definitions name it.
        **({ENV_REPORT_SIGNING_KEY: settings.run.report_signing_key} if settings.run.report_signing_key else {}),
    }


def local_table_arn(table_name: str) -> str:
    """DynamoDB Local's ARN for a table (its account and region are fixed)."""
    return f"arn:aws:dynamodb:ddblocal:000000000000:table/{table_name}"


def exports(endpoints: Endpoints, settings: JobSettings) -> str:
    return "\n".join(f"export {k}={shlex.quote(v)}" for k, v in job_env(endpoints, settings).items())
