"""The report signing key as the stack declares it: its spec, its usage, its alias and its
deletion window, read by the Pulumi component (components/report_signing.py) and by the local
stack's bootstrap (jobs/local/bootstrap.py), so a local report is signed by a key of the same
kind as production's. The algorithm the jobs sign with (jobs.store.kms) is the one this spec
admits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from jobs.contract import layout

KEY_SPEC: Final = "ECC_NIST_P256"
KEY_USAGE: Final = "SIGN_VERIFY"
SIGNING_ALGORITHM: Final = "ECDSA_SHA_256"  # the one ECC_NIST_P256 signs with
DELETION_WINDOW_DAYS: Final = 30


def signing_key_alias(stage: str) -> str:
    return f"alias/{layout.stage_prefix(stage)}-report-signing"


@dataclass(frozen=True)
class SigningKeySpec:
    alias: str
    description: str
    key_spec: str = KEY_SPEC
    key_usage: str = KEY_USAGE
    deletion_window_days: int = DELETION_WINDOW_DAYS


def signing_key_spec(stage: str) -> SigningKeySpec:
    return SigningKeySpec(alias=signing_key_alias(stage), description=f"DocuFlow reconcile report signatures ({stage})")
