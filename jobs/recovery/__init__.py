"""Recovery: restore the table into a new table and prove it (the drill), or roll back a bad deploy.

`plan` (pure) decides what to restore from and checks the request; `exports` finds and reads full
table exports; `restore` carries a plan out through jobs/store (PITR, an AWS Backup restore job,
or an export loaded in batches); `drill` restores, reconciles the new table against the buckets
through the reconcile package's live run and writes the report (`report`) once; `rollback`
(pure) and `rollback_run` put the live table back to a restored table's items after a bad
deploy, for the ingest to replay the window; `undelete` removes the delete markers a bad role
left in a data bucket. `cli`, `rollback_cli` and `undelete` are the commands.
"""

# The modules other packages use (imported as `jobs.recovery.<module>`: importing the package loads
# nothing); the rest are this package's own.
__all__ = ["cli", "drill", "plan", "rollback_cli", "undelete"]
