"""Demo data and the `make demo` flow on the embedded local stack."""

# `python -m jobs demo` (cli), the `make demo` flow (run), its corpus, seeding and review steps.
__all__ = [
    "cli",
    "corpus",
    "review",
    "run",
    "seed",
]
