"""Hypothesis profiles for the property suite, and fresh drivers for its examples.

HYPOTHESIS_PROFILE selects the profile: "ci" (the default) keeps the whole suite
to about a minute on a small machine, and skips the slow explain phase;
"thorough" runs many more examples and longer programs, with no deadline. Both
print the reproduction blob of a failing example.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import Phase, settings

from conformance.adapters.factory import open_driver
from conformance.driver import Driver

settings.register_profile(
    "ci",
    max_examples=50,
    stateful_step_count=50,
    deadline=timedelta(seconds=10),
    print_blob=True,
    phases=[phase for phase in Phase if phase is not Phase.explain],
)
settings.register_profile(
    "thorough",
    max_examples=1000,
    stateful_step_count=100,
    deadline=None,
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@dataclass(frozen=True)
class DriverFactory:
    """Opens one driver on an empty store per Hypothesis example.

    Hypothesis runs many examples inside one test call, so a function-scoped
    fixture would be shared between them; each example opens its own instead.
    """

    impl: str
    database: str | None

    @contextmanager
    def fresh(self) -> Iterator[Driver]:
        with tempfile.TemporaryDirectory(prefix="conformance-property-") as scratch:
            driver = open_driver(self.impl, self.database, Path(scratch))
            try:
                yield driver
            finally:
                driver.close()


@pytest.fixture(scope="session")
def drivers(request: pytest.FixtureRequest) -> DriverFactory:
    """The implementation chosen with --impl, on --database or CONFORMANCE_DATABASE if set."""
    database = request.config.getoption("--database") or os.environ.get("CONFORMANCE_DATABASE")
    return DriverFactory(impl=request.config.getoption("--impl"), database=database)
