"""What a reconcile reads, each input in its own module, each yielding the frames of `frames`.

`live` (a parallel Scan and the buckets' listings), `export` (DynamoDB exports), `inventory` (S3
Inventory reports), `table_state` (the table as an earlier run kept it, brought forward by an
incremental export), `results` (result.json contents for --deep); `location` and `datafiles` are
what the file readers share (local paths or s3:// URIs; manifest-listed data files, checked).
The local stack's jobs/local/writers.py writes the same file layouts for tests and benchmarks.
"""

# The modules other packages use (imported as `jobs.reconcile.inputs.<module>`: importing the package loads
# nothing); the rest are this package's own.
__all__ = ["datafiles", "export", "inventory", "live", "results", "table_state", "versions"]
