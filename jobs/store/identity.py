"""STS adapter: who is calling AWS (GetCallerIdentity), recorded beside a name a person typed
(`reconcile acknowledge --by`), so a record says which credentials made it, not only who the
caller said they were. GetCallerIdentity needs no permission: any credentials may ask.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from jobs.observability import CallMetrics
from jobs.store._aws import translated
from jobs.store.clients import _built, botocore_config

if TYPE_CHECKING:
    from jobs.settings import JobSettings

__all__ = ["Caller", "caller_identity", "sts_client"]


class Caller(NamedTuple):
    arn: str
    account: str
    user_id: str


def sts_client(settings: JobSettings, **kwargs: Any) -> Any:
    """STS (its endpoint variable is AWS_ENDPOINT_URL_STS; moto's server answers it locally).
    Typed by use: no mypy-boto3 stubs for STS are installed.
    """
    return _built("sts", lambda session: session.client("sts", config=botocore_config(settings), **kwargs))


def caller_identity(client: Any, metrics: CallMetrics) -> Caller:
    with metrics.call("sts.GetCallerIdentity"), translated("sts.GetCallerIdentity"):
        response = client.get_caller_identity()
    return Caller(str(response["Arn"]), str(response["Account"]), str(response["UserId"]))
