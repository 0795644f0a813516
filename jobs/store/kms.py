"""KMS adapter: the reports' signatures, made and checked with an asymmetric key (KMS Sign and
Verify over a SHA-256 digest; ECDSA on an ECC_NIST_P256 key, `components/report_signing.py`).

The private key never leaves KMS: a report is signed by a task whose role may call kms:Sign on
that one key, and anyone allowed kms:Verify (or holding the public key) can check it. A wrong
signature is `False`, not an error: AWS answers KMSInvalidSignatureException, moto's server a
`SignatureValid: false`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from jobs.errors import StoreConditionFailedError
from jobs.observability import CallMetrics
from jobs.store._aws import translated
from jobs.store.clients import kms_client

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient

__all__ = ["ALGORITHM", "Signatures", "kms_client"]

ALGORITHM: Final = "ECDSA_SHA_256"
_INVALID = {"KMSInvalidSignatureException": StoreConditionFailedError}


class Signatures:
    algorithm = ALGORITHM

    def __init__(self, client: KMSClient, metrics: CallMetrics) -> None:
        self._client = client
        self._metrics = metrics

    def sign(self, key_id: str, digest: bytes) -> bytes:
        with self._metrics.call("kms.Sign"), translated("kms.Sign", resource=key_id):
            response = self._client.sign(KeyId=key_id, Message=digest, MessageType="DIGEST", SigningAlgorithm=ALGORITHM)
        return response["Signature"]

    def verify(self, key_id: str, digest: bytes, signature: bytes) -> bool:
        try:
            with self._metrics.call("kms.Verify"), translated("kms.Verify", _INVALID, resource=key_id):
                response = self._client.verify(
                    KeyId=key_id, Message=digest, MessageType="DIGEST", Signature=signature, SigningAlgorithm=ALGORITHM
                )
        except StoreConditionFailedError:
            return False
        return bool(response["SignatureValid"])

    def create_key(self, description: str) -> str:
        """A signing key (the local stack's stand-in for the stack's; on AWS, Pulumi makes it)."""
        with self._metrics.call("kms.CreateKey"), translated("kms.CreateKey"):
            response = self._client.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY", Description=description)
        return response["KeyMetadata"]["Arn"]
