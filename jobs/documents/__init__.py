"""Dashboard access patterns (a user's documents, the queue of one status) and the actions on one
document: the owner's delete and restore, an operator's legal hold.
"""
