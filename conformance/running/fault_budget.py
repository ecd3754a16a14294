"""The restart budget: a hopeless implementation stops the run instead of failing it slowly.

Every implementation fault (crash, hang, garbage) costs the next scenario a fresh
process. Past the budget the run stops; the scenarios left are recorded as
`undefined` and the run's exit code says the implementation was unusable.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

from conformance.adapters.faults import ImplementationFault

STOPPED_KEY = pytest.StashKey[str]()


class FaultBudget:
    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.faults = 0

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, None]:
        yield
        if call.excinfo is None or not isinstance(call.excinfo.value, ImplementationFault):
            return
        self.faults += 1
        if self.faults > self.budget:
            reason = (
                f"the implementation faulted {self.faults} times, more than the restart "
                f"budget of {self.budget}; last fault: {call.excinfo.value}"
            )
            item.config.stash[STOPPED_KEY] = reason
            item.session.shouldstop = reason


def stopped_reason(config: pytest.Config) -> str | None:
    return config.stash.get(STOPPED_KEY, None)
