"""Tests of conformance/running."""
