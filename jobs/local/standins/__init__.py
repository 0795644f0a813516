"""Stand-ins for what only AWS does, living with the local stack and named as what they stand for:
the change log's Pipe and Firehose (`audit_pipe`, `firehose`), and the TTL and S3 lifecycle a
stage is moved through by date (`advance`, `ttl`, `lifecycle`, `rules`).
"""
