"""Tests of the reference implementation (reference/)."""
