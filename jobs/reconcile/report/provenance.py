"""Where a report comes from, and its signature: the software (image digest or git commit), the
stack, a digest of the settings in force, the previous report it follows, and the KMS signature
of summary.json's exact bytes (`summary.sig`, written just before summary.json).

The signing key is the stack's asymmetric KMS key (`components/report_signing.py`), named to the
job by DOCUFLOW_REPORT_SIGNING_KEY (its ARN, as the stack's task definitions set it); without it
a report is written unsigned and `python -m jobs reports verify` says so. A signature records the
key ARN that made it (the key resolved when signing): an alias is only a name, which may be
pointed at another key, so `reports verify` refuses one as the stack's key. A
signature is checked against the stack's key, never against the key the signature file names,
so a report signed by any other key the verifier may use does not pass. The image's digest
comes from DOCUFLOW_IMAGE_DIGEST (the task definition's), else the git commit of a checkout.
"""

from __future__ import annotations

import base64
import hashlib
import json
import platform
import subprocess
from datetime import datetime
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from jobs.settings import ENV_REPORT_SIGNING_KEY, JobSettings

if TYPE_CHECKING:
    from jobs.store.kms import Signatures

ENV_SIGNING_KEY = ENV_REPORT_SIGNING_KEY
SIGNATURE_FILE = "summary.sig"
SOFTWARE = "docuflow-jobs"
_REPO = Path(__file__).resolve().parents[2]


class Signature(BaseModel):
    """The KMS signature of one file's exact bytes (summary.json, a pack's manifest)."""

    model_config = ConfigDict(frozen=True)

    keyId: str  # the key as the signer was told it (the stack's alias)
    keyArn: str | None = None  # the key that signed (None: a signature from before keys were recorded)
    algorithm: str
    sha256: str
    signature: str  # base64
    signedAt: datetime


def git_commit() -> str:
    """The checkout's commit (a developer's run), or "" where there is no git (the image)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(_REPO), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def settings_digest(settings: JobSettings) -> str:
    """sha256 of the job settings in force (the environment every job reads), in a fixed order."""
    return hashlib.sha256(json.dumps(settings.env(), sort_keys=True).encode()).hexdigest()


def provenance(settings: JobSettings) -> dict[str, str]:
    image = settings.run.image_digest
    found = {
        "software": SOFTWARE,
        "python": platform.python_version(),
        "polars": version("polars"),
        "stack": settings.stage,
        "settingsDigest": settings_digest(settings),
        "signingKey": settings.run.report_signing_key or "none (unsigned)",
    }
    found["imageDigest" if image else "gitCommit"] = image or git_commit() or "unknown"
    return found


def sign(signatures: Signatures, key_id: str, body: bytes, at: datetime) -> Signature:
    """KMS's signature of `body` by the key `key_id` names, resolved to its ARN first and signed
    by that ARN, so the key recorded is the key that signed even if the alias moves meanwhile.
    """
    digest = hashlib.sha256(body).digest()
    key_arn = signatures.key_arn(key_id)
    signed = signatures.sign(key_arn, digest)
    return Signature(
        keyId=key_id,
        keyArn=key_arn,
        algorithm=signatures.algorithm,
        sha256=digest.hex(),
        signature=base64.b64encode(signed).decode(),
        signedAt=at,
    )


def signature_holds(signatures: Signatures, signature: Signature, body: bytes, stack_key_arn: str) -> str | None:
    """None when `signature` is the stack's key's signature of exactly `body`, else what is
    wrong. `stack_key_arn` is the stack's key resolved to its ARN (`Signatures.key_arn`); the
    key the signature file names is only compared with it, never used to verify.
    """
    digest = hashlib.sha256(body).digest()
    if digest.hex() != signature.sha256:
        return "its bytes are not the ones signed (sha256 differs)"
    if signature.keyArn is not None and signature.keyArn != stack_key_arn:
        return f"signed by key {signature.keyArn}, not by the stack's signing key {stack_key_arn}"
    try:
        raw = base64.b64decode(signature.signature, validate=True)
    except ValueError:
        return "the signature is not base64"
    if not signatures.verify(stack_key_arn, digest, raw):
        return f"the signature does not verify with the stack's signing key {stack_key_arn}"
    return None
