"""Tests of conformance/oracle."""
