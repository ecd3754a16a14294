"""Property tests: Hypothesis drives an implementation through the driver port and
compares every answer with the oracle models in conformance.oracle."""
