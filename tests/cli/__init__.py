"""Tests of conformance/cli."""
