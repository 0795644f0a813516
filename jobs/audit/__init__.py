"""The audit trail's questions: a document's timeline, what one actor changed, and whether the
change log is complete, asked in one Trino SQL of Athena in AWS or of DuckDB over the local log.
"""

# The modules other packages use (imported as `jobs.audit.<module>`: importing the package loads
# nothing); the rest are this package's own.
__all__ = ["cli", "engines", "log", "schema", "sql"]
