"""The restart budget: a hopeless implementation stops the run instead of failing it slowly.

Every implementation fault (crash, hang, garbage) costs the next scenario a fresh
process. Past the budget the run stops; the scenarios left are recorded as
`undefined` and the run's exit code says the implementation was unusable. The fault is put on
the report that met it and counted where every report arrives: in the run's own process, or
in the controller of a `--jobs` run, which so counts every worker's (see `workers`).
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

from conformance.adapters.faults import ImplementationFault
from conformance.running.workers import FAULT, carried, hand_home, is_worker, stop_every_worker

STOPPED_KEY = pytest.StashKey[str]()


class FaultBudget:
    def __init__(self, config: pytest.Config, budget: int) -> None:
        self._config = config
        self._session: pytest.Session | None = None
        self.budget = budget
        self.faults = 0

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._session = session

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, None]:
        outcome = yield
        if call.excinfo is not None and isinstance(call.excinfo.value, ImplementationFault):
            hand_home(outcome.get_result(), FAULT, str(call.excinfo.value))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count the fault a report carries, unless a worker's (its controller counts it);
        past the budget, stop: no item is started after the one that met the last fault."""
        if is_worker(self._config):
            return
        for fault in carried(report, FAULT):
            self.faults += 1
            if self.faults > self.budget and STOPPED_KEY not in self._config.stash:
                reason = (
                    f"the implementation faulted {self.faults} times, more than the restart "
                    f"budget of {self.budget}; last fault: {fault}"
                )
                self._config.stash[STOPPED_KEY] = reason
                if self._session is not None:
                    self._session.shouldstop = reason
                stop_every_worker(self._config, reason)


def stopped_reason(config: pytest.Config) -> str | None:
    return config.stash.get(STOPPED_KEY, None)
