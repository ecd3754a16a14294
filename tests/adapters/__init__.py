"""Tests of conformance/adapters."""
