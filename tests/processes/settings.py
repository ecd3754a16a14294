"""How big the process tests are: CI sizes by default, larger under CONFORMANCE_SOAK."""

from __future__ import annotations

import os
from datetime import UTC, datetime

PROCESSES = 3
"""Coordinator processes per test: more than the two cores of CI, so that they truly interleave."""
START = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
SOAK = max(1, int(os.environ.get("CONFORMANCE_SOAK", "1")))
"""CONFORMANCE_SOAK=<n> multiplies every test's rounds by n (see docs/concurrency.md)."""
