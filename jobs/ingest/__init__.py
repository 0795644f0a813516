"""The nightly ingest: sweep raw/, claim, extract, write result.json, then the summary item."""
