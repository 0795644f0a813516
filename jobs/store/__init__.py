"""The only modules that call AWS: S3 and DynamoDB adapters behind domain-level functions."""

# The adapters, one module per AWS service or concern (imported as `jobs.store.<module>`: importing
# the package loads no SDK); `_aws` (botocore's errors → jobs.errors) stays inside.
__all__ = [
    "archive",
    "athena",
    "call_recording",
    "clients",
    "dynamo",
    "kms",
    "metrics",
    "notices",
    "polling",
    "queue",
    "redrive",
    "restore",
    "s3",
    "streams",
    "table_export",
    "textract",
    "versions",
]
