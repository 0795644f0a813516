"""The nightly chain's library, pure: what tonight exports, whether the inventories may be judged, the life of
findings across nights (the ledger), what a run judged, and the restore drill's age.
"""
