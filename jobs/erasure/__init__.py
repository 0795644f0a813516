"""GDPR erasure of one user: every item, version and delete marker, for good, but what a legal
hold keeps; a write-once receipt of what was deleted and of what still holds the user's data.
"""

# The modules other packages use (imported as `jobs.erasure.<module>`: importing the package loads
# nothing); the rest are this package's own.
__all__ = ["cli", "run"]
