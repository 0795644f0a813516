"""KMS adapter: the reports' signatures, made and checked with an asymmetric key (KMS Sign and
Verify over a SHA-256 digest; ECDSA on an ECC_NIST_P256 key, `components/report_signing.py`).

The private key never leaves KMS: a report is signed by a task whose role may call kms:Sign on
that one key, and anyone allowed kms:Verify (or holding the public key) can check it. A wrong
signature is `False`, not an error: AWS answers KMSInvalidSignatureException, moto's server a
`SignatureValid: false`.

A key is named to the jobs by its alias, which is a name anyone with kms:UpdateAlias may point
at another key: `key_arn` resolves it (DescribeKey) to the key's ARN, the identity a signature
records and a verifier compares (Sign's response names the key ARN on AWS, but moto echoes the
alias, so the ARN comes from DescribeKey on both).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from jobs.contract.signing import SIGNING_ALGORITHM
from jobs.errors import StoreConditionFailedError
from jobs.observability import CallMetrics
from jobs.store._aws import translated
from jobs.store.clients import kms_client

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient

__all__ = ["ALGORITHM", "Signatures", "kms_client"]

ALGORITHM: Final = SIGNING_ALGORITHM
_INVALID = {"KMSInvalidSignatureException": StoreConditionFailedError}


class Signatures:
    algorithm = ALGORITHM

    def __init__(self, client: KMSClient, metrics: CallMetrics) -> None:
        self._client = client
        self._metrics = metrics

    def key_arn(self, key_id: str) -> str:
        """The ARN of the key `key_id` names (an alias, an alias ARN, a key id or a key ARN)."""
        with self._metrics.call("kms.DescribeKey"), translated("kms.DescribeKey", resource=key_id):
            response = self._client.describe_key(KeyId=key_id)
        return response["KeyMetadata"]["Arn"]

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
