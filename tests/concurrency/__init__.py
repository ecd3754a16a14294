"""Tests of conformance/concurrency."""
