"""The reconcile reports as evidence: the chain of signed summaries checked (`verify`), a month's
reports packed into one signed, write-once archive (`pack`). `python -m jobs reports` (`cli`).
"""

from jobs.reports.verify import Problem, Verification, verify_chain

__all__ = ["Problem", "Verification", "verify_chain"]
