"""result.json for the frontend: a presigned GET of the user's own result.json, and the processed
bucket's CORS rules proven in a real headless Chromium against the local S3 server.

moto's server honours a bucket's CORS configuration on object GETs once its blanket CORS is off
(`MOTO_DISABLE_GLOBAL_CORS`, which jobs.local.servers sets): a request from an allowed origin gets
`Access-Control-Allow-Origin`, one from any other origin gets none, so the browser itself decides
whether the page may read the response, as it would against AWS.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from jobs.contract import CorsSpec, Status, bucket_specs, layout
from jobs.documents.url import result_url
from jobs.errors import DocumentNotFoundError
from jobs.ingest.plans import BackfillPlan
from jobs.ingest.run import IngestRun
from jobs.local.bootstrap import ensure_bucket
from jobs.local.stack import REGION
from jobs.store.dynamo_wire import to_wire

REPO_ROOT = Path(__file__).resolve().parents[3]
INVOICE = {
    "invoiceNumber": "U-1",
    "vendorName": "Acme GmbH",
    "invoiceDate": "2026-03-01",
    "currency": "EUR",
    "totalAmount": "119.00",
}


def processed(stack, user: str = "u1", doc: str = "d1") -> None:
    key = layout.raw_key(user, doc, "invoice.json")
    stack.s3().put_object(Bucket=stack.settings.store.raw_bucket, Key=key, Body=json.dumps(INVOICE).encode())
    IngestRun(stack.settings, BackfillPlan()).execute()


def documents(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jobs", "documents", *args],
        env=os.environ.copy(),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_url_reads_the_users_own_result_json_for_as_long_as_the_stack_says(stack) -> None:
    processed(stack)
    signed = result_url(stack.settings, "u1", "d1")
    url = urllib.parse.urlsplit(signed.url)
    assert url.path == f"/{stack.settings.store.processed_bucket}/{layout.result_key('u1', 'd1')}"
    query = urllib.parse.parse_qs(url.query)
    assert query["X-Amz-Expires"] == [str(stack.settings.review.result_url_seconds)] and "X-Amz-Signature" in query
    with urllib.request.urlopen(signed.url) as response:  # the browser's GET, without a browser
        assert json.loads(response.read())["documentId"] == "d1"
    done = documents("url", "--user", "u1", "--doc", "d1")
    assert done.returncode == 0
    shown = json.loads(done.stdout)
    assert layout.result_key("u1", "d1") in shown["url"] and layout.parse_ts(shown["expiresAt"]) > layout.utc_now()


@pytest.mark.parametrize(
    ("user", "doc", "says"),
    [
        ("u2", "d1", "user 'u2' has no document 'd1'"),  # u1's document asked for as u2's: not found
        ("u1", "nope", "user 'u1' has no document 'nope'"),
        ("u1", "../u2", "documentId"),
        ("u1", "gone", "has no result.json to read"),
    ],
)
def test_no_url_for_what_is_not_the_users_readable_result(stack, user: str, doc: str, says: str) -> None:
    processed(stack)  # u1's d1
    processed(stack, "u2", "mine")
    processed(stack, "u1", "gone")
    gone = next(i for i in stack.items() if i.documentId == "gone")  # its raw object deleted: a tombstone
    tomb = gone.evolve(status=Status.DELETED, version=gone.version + 1, updatedBy="repair:test")
    stack.dynamodb().put_item(TableName=stack.settings.store.table_name, Item=to_wire(tomb.to_item()))
    with pytest.raises((DocumentNotFoundError, ValueError), match=says):
        result_url(stack.settings, user, doc)
    done = documents("url", "--user", user, "--doc", doc)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1 and says in done.stderr


def test_the_local_processed_bucket_has_the_contracts_cors_rules(stack) -> None:
    (spec,) = [s for s in bucket_specs(stack.settings.stage, {}, cors_origins=("http://localhost:5173",)) if s.cors]
    local = stack.s3().get_bucket_cors(Bucket=stack.settings.store.processed_bucket)["CORSRules"]
    assert local == spec.cors.configuration()["CORSRules"]
    for other in ("raw", "reports"):
        bucket = getattr(stack.settings.store, f"{other}_bucket")
        with pytest.raises(stack.s3().exceptions.ClientError, match="NoSuchCORSConfiguration"):
            stack.s3().get_bucket_cors(Bucket=bucket)


# --- the browser ---------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's chromium (`make setup` installs it); installed here when missing and possible."""
    found = shutil.which("chromium")
    if found is None and shutil.which("apt-get") and os.geteuid() == 0:
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "chromium"],
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
            capture_output=True,
            timeout=900,
            check=False,
        )
        found = shutil.which("chromium")
    if found is None:
        pytest.skip("no chromium, and it cannot be installed here (needs apt-get as root): run `make setup`")
    return found


class Page(ThreadingHTTPServer):
    """Serves a page that fetches `target` and posts back what it could read."""

    def __init__(self, target: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.target = target
        self.reports: list[dict[str, Any]] = []
        self.reported = threading.Event()

    @property
    def port(self) -> int:
        return self.server_address[1]


_PAGE = """<!doctype html><meta charset="utf-8"><title>result</title><script>
const report = (outcome) => fetch("/report", {method: "POST", body: JSON.stringify(outcome)});
fetch(%s).then((r) => r.json()).then(
  (doc) => report({ok: true, documentId: doc.documentId, vendor: doc.invoice.vendorName}),
  (error) => report({ok: false, error: String(error)}));
</script>"""


class _Handler(BaseHTTPRequestHandler):
    server: Page

    def do_GET(self) -> None:
        body = (_PAGE % json.dumps(self.server.target)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.server.reports.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(204)
        self.end_headers()
        self.server.reported.set()

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def page(stack) -> Iterator[Page]:
    processed(stack)
    served = Page(result_url(stack.settings, "u1", "d1").url)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield served
    served.shutdown()
    served.server_close()


def _open(chromium: str, url: str, page: Page, profile: Path) -> dict[str, Any]:
    page.reported.clear()
    page.reports.clear()
    browser = subprocess.Popen(
        [
            chromium,
            "--headless=new",
            "--no-sandbox",  # the test may run as root, where Chromium's sandbox refuses to start
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            f"--user-data-dir={profile}",
            url,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert page.reported.wait(60), f"the page at {url} reported nothing within 60 s"
        return page.reports[0]
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            browser.kill()


def test_a_browser_reads_the_presigned_result_from_an_allowed_origin_and_not_from_another(
    stack, chromium: str, page: Page, tmp_path: Path
) -> None:
    allowed, other = f"http://localhost:{page.port}", f"http://127.0.0.1:{page.port}"
    (spec,) = [
        s
        for s in bucket_specs(stack.settings.stage, stack.settings.store.bucket_names(), cors_origins=(allowed,))
        if s.cors
    ]
    ensure_bucket(stack.s3(), spec, REGION)  # the stack's origins: the local bootstrap, from the contract
    assert spec.cors == CorsSpec(allowed_origins=(allowed,))

    read = _open(chromium, f"{allowed}/", page, tmp_path / "a")
    assert read == {"ok": True, "documentId": "d1", "vendor": "Acme GmbH"}
    refused = _open(chromium, f"{other}/", page, tmp_path / "b")
    assert refused["ok"] is False and "Failed to fetch" in refused["error"]
    # S3 served the object both times: it is the browser that withheld it from the other origin.
    for origin, grants in ((allowed, allowed), (other, None)):
        request = urllib.request.Request(page.target, headers={"Origin": origin})
        with urllib.request.urlopen(request) as response:
            assert response.status == 200 and response.headers.get("Access-Control-Allow-Origin") == grants
