"""Where the checkout's parts are, for tests in any folder of tests/."""

from __future__ import annotations

from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
FEATURES = CHECKOUT / "features"
STEPS = CHECKOUT / "steps"
DOCS = CHECKOUT / "docs"
SHARED_SPEC = CHECKOUT.parent / "shared" / "spec"
"""The source specifications, where `../shared` sits beside the checkout (as in CI)."""
FAKES = CHECKOUT / "tests" / "protocol" / "fakes"
"""Implementations of the protocol that misbehave on purpose."""
TEST_DATA = CHECKOUT / "tests" / "data"
