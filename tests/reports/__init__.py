"""Tests of conformance/reports."""
