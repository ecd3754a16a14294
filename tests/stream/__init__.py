"""Tests of conformance/stream."""
