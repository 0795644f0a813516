"""The nightly ingest: drain the arrival queue (or sweep raw/), claim, extract, write result.json,
then the summary item.
"""

# The modules other packages use (imported as `jobs.ingest.<module>`: importing the package loads
# nothing); the rest are this package's own.
__all__ = ["cli", "costs", "plan", "process", "restore_archived", "run", "summary"]
