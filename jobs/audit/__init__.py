"""The audit trail's questions: a document's timeline, what one actor changed, and whether the
change log is complete, asked in one Trino SQL of Athena in AWS or of DuckDB over the local log.
"""
