"""Tests of conformance/spec."""
