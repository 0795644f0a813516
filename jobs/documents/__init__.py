"""Dashboard access patterns (a user's documents, the queue of one status) and the actions on one
document: the owner's delete and restore, an operator's legal hold.
"""

# The modules other packages use (imported as `jobs.documents.<module>`: importing the package loads
# nothing); the rest are this package's own.
__all__ = ["actions", "cli", "queries", "url"]
