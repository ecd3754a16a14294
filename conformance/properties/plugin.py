"""The pytest side of the properties: their budget, their seed, and a fresh driver per example.

`--properties` chooses the Hypothesis profile: `ci` keeps every property to seconds on a
small machine and skips the slow explain phase; `thorough` runs many more examples and
longer programs, with no deadline. Each reports one counterexample, the first it shrank (two
distinct failures would come as an exception group, which names no clause). Neither keeps an
example database: `conformance run`
writes nothing into the folder it runs from, and a failure is reproduced from the seed the
header records or from the counterexample the evidence prints.
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, settings
from hypothesis.statistics import collector, describe_statistics

from conformance.adapters.containment import Containment
from conformance.adapters.factory import open_driver
from conformance.driver import Driver
from conformance.properties import Budget
from conformance.running.pytest_plugin import containment_of
from conformance.running.recorder import SEARCH

# Both profiles descend from Hypothesis' own default, not from whatever profile is loaded: where
# a CI variable is set (GitHub Actions and the like), Hypothesis loads its "ci" profile at
# import, whose derandomize=True would silently replace the seed the header records.
settings.register_profile(
    Budget.CI.value,
    parent=settings.get_profile("default"),
    derandomize=False,
    max_examples=15,
    stateful_step_count=40,
    deadline=timedelta(seconds=30),
    print_blob=True,
    database=None,
    report_multiple_bugs=False,
    phases=[phase for phase in Phase if phase is not Phase.explain],
)
settings.register_profile(
    Budget.THOROUGH.value,
    parent=settings.get_profile("default"),
    derandomize=False,
    max_examples=1000,
    stateful_step_count=100,
    deadline=None,
    print_blob=True,
    database=None,
    report_multiple_bugs=False,
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("conformance").addoption(
        "--properties",
        default=Budget.NONE.value,
        choices=[budget.value for budget in Budget],
        help="the property checks' budget: none, ci or thorough (`conformance run` runs them "
        "with ci unless told otherwise)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Load the budget's profile; a run checking properties without a seed gets one drawn here
    (before Hypothesis' own plugin reads it), so that its header can name it."""
    budget = Budget(config.getoption("--properties"))
    settings.load_profile(Budget.THOROUGH.value if budget is Budget.THOROUGH else Budget.CI.value)
    if budget is not Budget.NONE and config.getoption("hypothesis_seed", None) is None:
        config.option.hypothesis_seed = str(secrets.randbits(32))


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Keep what Hypothesis says of the search (examples tried, how long, why it stopped), for
    @given tests and state machines alike: innermost, so that this collector is the one heard."""

    def keep(statistics: Any) -> None:
        named: Any = {**statistics, "nodeid": item.nodeid}
        described = describe_statistics(named)
        item.stash[SEARCH] = _without_events(described).strip()

    listening: Any = collector  # typed for its default value (None), not for what it holds
    with listening.with_value(keep):
        yield


def _without_events(described: str) -> str:
    """Hypothesis' account less its events (a state machine's are the repr of every rule)."""
    lines = described.splitlines()
    events = next((i for i, line in enumerate(lines) if line.strip() == "- Events:"), None)
    if events is None:
        return described
    after = [line for line in lines[events + 1 :] if not line.lstrip().startswith("*")]
    return "\n".join(lines[:events] + after)


@dataclass(frozen=True)
class DriverFactory:
    """Opens one driver on an empty store per Hypothesis example.

    Hypothesis runs many examples inside one test call, so a function-scoped
    fixture would be shared between them; each example opens its own instead.
    """

    impl: str
    database: str | None
    scratch: Path
    containment: Containment = field(default_factory=Containment)

    @contextmanager
    def fresh(self) -> Iterator[Driver]:
        with tempfile.TemporaryDirectory(prefix="example-", dir=self.scratch) as scratch:
            driver = open_driver(
                self.impl, self.database, Path(scratch), containment=self.containment
            )
            try:
                yield driver
            finally:
                driver.close()


@pytest.fixture(scope="session")
def drivers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> DriverFactory:
    """The implementation chosen with --impl, on --database if set, contained as the run says."""
    return DriverFactory(
        impl=request.config.getoption("--impl"),
        database=request.config.getoption("--database"),
        scratch=tmp_path_factory.mktemp("properties"),
        containment=containment_of(request.config),
    )


@pytest.fixture(scope="session")
def budget(request: pytest.FixtureRequest) -> Budget:
    """The properties' budget (`--properties`), for what a property adapts to it."""
    return Budget(request.config.getoption("--properties"))
