"""The reconcile reports as evidence: the chain of signed summaries checked (`verify`), a month's
reports packed into one signed, write-once archive (`pack`). `python -m jobs reports` (`cli`).
`job.py` declares the job for the registry; this package's own module imports nothing.
"""
