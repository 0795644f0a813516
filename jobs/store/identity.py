"""STS adapter: who is calling AWS (GetCallerIdentity), recorded beside a name a person typed
(`reconcile acknowledge --by`), so a record says which credentials made it, not only who the
caller said they were. GetCallerIdentity needs no permission: any credentials may ask.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from jobs.observability import CallMetrics
from jobs.store._aws import translated
from jobs.store.clients import sts_client

if TYPE_CHECKING:
    from jobs.store.clients import STSClient

__all__ = ["Caller", "caller_identity", "sts_client"]


class Caller(NamedTuple):
    arn: str
    account: str
    user_id: str


def caller_identity(client: STSClient, metrics: CallMetrics) -> Caller:
    with metrics.call("sts.GetCallerIdentity"), translated("sts.GetCallerIdentity"):
        response = client.get_caller_identity()
    return Caller(str(response["Arn"]), str(response["Account"]), str(response["UserId"]))
