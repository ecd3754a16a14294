"""The pytest side of the properties: their budget, their seed, and a fresh driver per example.

`--properties` chooses the Hypothesis profile: `ci` keeps every property to seconds on a
small machine and skips the slow explain phase; `thorough` runs many more examples and
longer programs, with no deadline. Each reports one counterexample, the first it shrank (two
distinct failures would come as an exception group, which names no clause). Neither keeps an
example database: `conformance run`
writes nothing into the folder it runs from, and a failure is reproduced from the seed the
header records or from the counterexample the evidence prints.

No example is cut short by the wall clock. The suite's per-test timeout (suite.ini) would stop a
property's search inside whichever example was running when it expired; Hypothesis took that
for a failure of the example, replayed it, saw it pass, and reported the property `errored`
with a FlakyFailure (or, stopped inside a draw, a FlakyStrategyDefinition). A property's budget
is its examples, not a time: its items carry no per-test timeout, and the same bound applies to
each example instead (to each driver it opens), where it can only mean a hang, which ends the
search at once and is reported as a `timeout`.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from types import FrameType
from typing import Any, Final

import pytest
from hypothesis import Phase, settings
from hypothesis.statistics import collector, describe_statistics

from conformance.adapters.containment import Containment
from conformance.adapters.factory import open_driver
from conformance.adapters.faults import stderr_of
from conformance.driver import Driver
from conformance.properties import CI_EXAMPLES, PROPERTIES_DIR, Budget, draw_seed
from conformance.running.options import options_of
from conformance.running.recorder import SEARCH

THOROUGH_EXAMPLES: Final = "CONFORMANCE_THOROUGH_EXAMPLES"
"""The environment variable that sets how many examples each thorough search tries (default
1000): the kit's own CI runs the thorough profile on every commit at a reduced size with it.
Each record's evidence says what the search was (`Stopped because settings.max_examples=N`)."""


def thorough_examples() -> int:
    """The thorough profile's examples per search: CONFORMANCE_THOROUGH_EXAMPLES, else 1000."""
    text = os.environ.get(THOROUGH_EXAMPLES, "").strip()
    try:
        return max(1, int(text)) if text else 1000
    except ValueError:
        return 1000


SHRINK: Final = "CONFORMANCE_PROPERTY_SHRINK"
"""Set to 0, the searches stop at the first failing example without shrinking or explaining it:
for a sweep that wants each verdict, not the shortest counterexample (bench/property_kills.py),
since shrinking a program can take Hypothesis up to five minutes a search."""


def phases(*left_out: Phase) -> list[Phase]:
    """The searches' phases, less `left_out`, and less shrinking where SHRINK says so."""
    if os.environ.get(SHRINK, "").strip() == "0":
        left_out = (*left_out, Phase.shrink, Phase.explain)
    return [phase for phase in Phase if phase not in left_out]


# Both profiles descend from Hypothesis' own default, not from whatever profile is loaded: where
# a CI variable is set (GitHub Actions and the like), Hypothesis loads its "ci" profile at
# import, whose derandomize=True would silently replace the seed the header records. One failure
# is reported per search: shrinking every distinct one (report_multiple_bugs) made a failing
# work-request search shrink four breaks, and tests/properties/test_gherkin_counterexamples.py took
# 9 min 20 s instead of 23 s.
settings.register_profile(
    Budget.CI.value,
    parent=settings.get_profile("default"),
    derandomize=False,
    max_examples=CI_EXAMPLES,
    stateful_step_count=40,
    deadline=timedelta(seconds=30),
    print_blob=True,
    database=None,
    report_multiple_bugs=False,
    phases=phases(Phase.explain),
)
settings.register_profile(
    Budget.THOROUGH.value,
    parent=settings.get_profile("default"),
    derandomize=False,
    max_examples=thorough_examples(),
    stateful_step_count=100,
    deadline=None,
    print_blob=True,
    database=None,
    report_multiple_bugs=False,
    phases=phases(),
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
        config.option.hypothesis_seed = str(draw_seed())
    draw_from_the_seed_alone()


def draw_from_the_seed_alone() -> None:
    """Hypothesis also draws constants it finds in the source of "local" modules: the kit's own
    in a checkout but not in an installed kit (site-packages is not local), and whatever
    implementation module a run imports. A seed then repeats a search only for one layout of
    one version of the code. Drawing from no such constants, a seed means the same search in a
    checkout and in a wheel, and whatever the implementation. (Hypothesis offers no setting for
    this; where its internals moved, the search keeps them and only this guarantee is lost.)"""
    from hypothesis.internal.conjecture import providers

    if hasattr(providers, "_get_local_constants") and hasattr(providers, "Constants"):
        providers._get_local_constants = providers.Constants  # type: ignore[attr-defined]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A property's search is bounded by its examples: no per-test timeout (see ExampleTimeout)."""
    for item in items:
        if is_property(item):
            item.add_marker(pytest.mark.timeout(0), append=False)


def is_property(item: pytest.Item) -> bool:
    return Path(item.path).resolve().parent == PROPERTIES_DIR


def example_timeout(config: pytest.Config) -> float | None:
    """The suite's per-test timeout (suite.ini, --timeout or PYTEST_TIMEOUT), applied to one
    example of a property instead; None when it is off or pytest-timeout is absent."""
    try:
        import pytest_timeout  # type: ignore[import-untyped]  # it ships no py.typed
    except ImportError:
        return None
    seconds: float | None = pytest_timeout.get_env_settings(config).timeout
    return seconds if seconds and seconds > 0 else None


class ExampleTimeout(BaseException):
    """One example of a property outlived the suite's timeout: the implementation hangs.

    A BaseException, so that Hypothesis does not take it for the example's failure, replay the
    example (a hang would cost the bound again at every replay and every shrink) and call the
    property flaky: the search ends at once, and the recorder reads `timeout` from the message.
    """


@contextmanager
def example_bound(seconds: float | None) -> Iterator[None]:
    """Raise ExampleTimeout in this thread if the block outlives `seconds` (SIGALRM: only in the
    main thread, where pytest runs; elsewhere the block is left unbounded). A timer already
    running (an enclosing bound, a timeout marker of the test's own) is left to bound it."""
    if (
        seconds is None
        or threading.current_thread() is not threading.main_thread()
        or signal.getitimer(signal.ITIMER_REAL)[0] > 0
    ):
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise ExampleTimeout(f"Timeout (>{seconds:g} s) in one example of a property")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Keep what Hypothesis says of the search (examples tried, how long, why it stopped), for
    @given tests and state machines alike: innermost, so that this collector is the one heard;
    and start the check with no stderr lines of an earlier one."""

    def keep(statistics: Any) -> None:
        named: Any = {**statistics, "nodeid": item.nodeid}
        described = describe_statistics(named)
        item.stash[SEARCH] = _without_events(described).strip()

    factory = getattr(item, "funcargs", {}).get("drivers")
    if isinstance(factory, DriverFactory):
        factory.last_said.clear()  # what an earlier check's implementation said is not this one's
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
    timeout: float | None = None
    """The bound on one driver's life, that is on one example (see ExampleTimeout)."""
    last_said: list[str] = field(default_factory=list, compare=False)
    """The last closed driver's stderr lines: Hypothesis runs the failing example last, so a
    failure's account shows what the implementation said in it."""

    def __repr__(self) -> str:
        """What a counterexample shows of it: the implementation, never the runner's paths
        (a published report must hold none)."""
        return f"DriverFactory(impl={self.impl!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """Hypothesis prints a dataclass field by field unless it says otherwise here."""
        printer.text(repr(self))

    @contextmanager
    def fresh(self) -> Iterator[Driver]:
        with (
            example_bound(self.timeout),
            tempfile.TemporaryDirectory(prefix="example-", dir=self.scratch) as scratch,
        ):
            driver = open_driver(
                self.impl, self.database, Path(scratch), containment=self.containment
            )
            try:
                yield driver
            finally:
                driver.close()  # a killed process's last stderr lines are read to the end
                self.last_said[:] = stderr_of(driver)

    def stderr_tail(self) -> tuple[str, ...]:
        """What the implementation said in the last example (see `SpeaksOnStderr`)."""
        return tuple(self.last_said)


@pytest.fixture(scope="session")
def drivers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> DriverFactory:
    """The implementation the run tests, on its database if set, contained as the run says."""
    options = options_of(request.config)
    return DriverFactory(
        impl=options.impl,
        database=options.database,
        scratch=tmp_path_factory.mktemp("properties"),
        containment=options.containment(),
        timeout=example_timeout(request.config),
    )


@pytest.fixture(scope="session")
def seed(request: pytest.FixtureRequest) -> int | None:
    """The run's Hypothesis seed (drawn in pytest_configure when none was given), for a check
    split over several searches to derive each search's own from; None in a run without one."""
    given = request.config.getoption("hypothesis_seed", None)
    return int(given) if given is not None and str(given).isdigit() else None


@pytest.fixture(scope="session")
def budget(request: pytest.FixtureRequest) -> Budget:
    """The properties' budget (`--properties`), for what a property adapts to it."""
    return Budget(request.config.getoption("--properties"))
