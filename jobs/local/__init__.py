"""The embedded local AWS stack: DynamoDB Local and moto S3 as processes, and their bootstrap."""

# The dev stack's modules (`python -m jobs local`: cli; the stack: stack, servers, bootstrap, moto_server;
# what AWS writes in production: writers, table_export), imported as `jobs.local.<module>`.
__all__ = [
    "bootstrap",
    "cli",
    "moto_server",
    "servers",
    "stack",
    "standins",
    "table_export",
    "writers",
]
