"""Tests of conformance/properties."""
