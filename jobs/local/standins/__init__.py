"""Stand-ins for what only AWS does, living with the local stack and named as what they stand for:
the change log's Pipe and Firehose (`audit_pipe`, `firehose`), the TTL and S3 lifecycle a
stage is moved through by date (`advance`, `ttl`, `lifecycle`, `rules`), and the table exports
and S3 Inventory reports the nightly reconcile reads (`exports`, `inventory`).
"""

# One module per stand-in (imported as `jobs.local.standins.<module>`).
__all__ = [
    "advance",
    "alarms",
    "audit_pipe",
    "exports",
    "firehose",
    "inventory",
    "lifecycle",
    "queue_metrics",
    "rules",
    "ttl",
]
