"""Dashboard access patterns: a user's documents, and the cross-user queue of one status."""
