"""DocuFlow batch jobs: ingest, reconcile, extraction and the local stack."""
