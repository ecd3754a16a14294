"""Tests of conformance/mutants."""
