"""moto's server for the embedded stack, with its SQS emulation made O(1) per message check.

moto 5.2 asks for the current time through `unix_time_millis()` (a datetime round trip)
once per message per visibility check, and recomputes every queue attribute (each an O(n) scan)
for each message it receives, only to read the retention period. With a night's backlog in the
queue that made one ReceiveMessage take seconds and bounded any drain to a few documents per
second (figures: README, The local stack, and docs/tuning.md). The two replacements below compute the same
values the same way, from `time.time()` and the queue's own retention attribute.

moto also refuses GetObjectTagging, GetObjectLegalHold and GetObjectAcl on an object in GLACIER
or DEEP_ARCHIVE (InvalidObjectState); S3 refuses only the GET of its bytes, and the lifecycle
stand-in archives objects whose tags and holds the jobs still read. The third replacement reads
those three as S3 does. Everything else is moto's own server, unchanged.

    python jobs/local/moto_server.py -H 127.0.0.1 -p PORT   (imports only moto: runs from any directory)
"""

from __future__ import annotations

import sys
import time
from typing import Any

from moto.core.utils import unix_time_millis
from moto.s3.responses import S3Response
from moto.server import main as serve
from moto.sqs import models as sqs

_get_key = S3Response._get_key
# The sub-resources S3 reads for an archived object (only the object's bytes need a restore).
_METADATA_READS = ("tagging", "legal-hold", "acl")


def _millis(dt: Any = None) -> float:
    return time.time() * 1000.0 if dt is None else unix_time_millis(dt)


def _retained(self: sqs.SQSBackend, queue_name: str, message: sqs.Message) -> bool:
    queue = self.get_queue(queue_name)
    # moto sets a queue's attributes from its request at run time (not declared on the class), and
    # a message's sent_timestamp when it stores it (declared as None until then).
    retention = int(queue.message_retention_period)  # type: ignore[attr-defined]
    return retention + message.sent_timestamp / 1000 > time.time()  # type: ignore[operator]


def _key_metadata_readable(self: S3Response, validate_storage_class: bool = True) -> Any:
    metadata = any(name in self.querystring for name in _METADATA_READS)
    return _get_key(self, validate_storage_class=validate_storage_class and not metadata)


def patch() -> None:
    # moto.sqs.models imports unix_time_millis from moto.core.utils; replaced where it is looked up.
    sqs.unix_time_millis = _millis  # type: ignore[attr-defined]
    # Replacing the backend's method is the patch (see the module's doc).
    sqs.SQSBackend.is_message_valid_based_on_retention_period = _retained  # type: ignore[method-assign]
    S3Response._get_key = _key_metadata_readable  # type: ignore[method-assign]


if __name__ == "__main__":
    patch()
    serve(sys.argv[1:])
