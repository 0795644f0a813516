"""The review queue worked: claim a document in review, correct its header fields, settle it.

`ReviewDesk` (desk.py) is what a CLI (`python -m jobs review …`, cli.py) or an API calls; the rules
it applies are pure (rules.py: claims and leases; corrections.py: a reviewer's values read and
validated like an extraction's). `job.py` declares the job for the registry; this package's
own module imports nothing, so reading that declaration loads no store.
"""
