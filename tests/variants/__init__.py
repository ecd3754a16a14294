"""Tests of conformance/variants."""
