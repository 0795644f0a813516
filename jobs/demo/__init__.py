"""Demo data and the `make demo` flow on the embedded local stack."""
