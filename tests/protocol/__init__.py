"""Tests of protocol v1, the served reference and the exec adapter."""
