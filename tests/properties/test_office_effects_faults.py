"""The office effects runner and an armed count-read fault that a concurrent batch may spend.

A batch wake whose count read fails may be decided again in a fresh transaction, and by then a
sibling's run may be there to merge into: the fault is spent, no wake was degraded, and the
counter cannot say so. The runner must then accept the next wake either way.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from tempfile import mkdtemp
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.adapters.factory import open_driver
from conformance.driver import CallOutcome, ConcurrentCall, Driver, Outcome
from conformance.properties.office_operations import Assign, Batch
from conformance.properties.test_office_effects import effects_of

pytestmark = pytest.mark.cost(seconds=2)

START = datetime(2026, 2, 2, 8, 0, tzinfo=UTC)
AGENT_WAKES = ("assign_task", "assign_task_keyless", "enqueue_wake")


class SpentInBatch:
    """The reference, but an armed fault is spent by any batch that merges, standing for the race
    in which a batch wake's read fails and, decided again, it merges into a sibling's run; until
    then the fault waits for the next wake an agent's assignment or a raw delivery makes."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver
        self.pending = False
        self.spent_in_batch = False

    def fail_next_count_read(self) -> None:
        self.pending = True

    def run_concurrently(self, calls: list[ConcurrentCall]) -> list[CallOutcome]:
        answers = self._driver.run_concurrently(calls)
        merged = any(
            (answer.result or {}).get("wake", {}).get("outcome") == Outcome.COALESCED.value
            for answer in answers
        )
        self.spent_in_batch = self.spent_in_batch or (self.pending and merged)
        self.pending = self.pending and not merged
        return answers

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._driver, name)
        if name not in AGENT_WAKES:
            return attribute

        def wake(*args: Any, **kwargs: Any) -> Any:
            if self.pending and kwargs.get("acting_agent_id", True):
                self._driver.fail_next_count_read()
                self.pending = False
            return attribute(*args, **kwargs)

        return wake


@settings(
    max_examples=1, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.none())  # the runner notes its scenario as Hypothesis does
def test_a_fault_a_merging_batch_may_have_spent_is_judged_by_what_the_next_wake_shows(
    tmp_path: Path, _: None
) -> None:
    reference = open_driver("reference", None, Path(mkdtemp(dir=tmp_path)))
    driver = SpentInBatch(reference)
    try:
        effects = effects_of(driver, driver.describe())  # type: ignore[arg-type]
        schedule = [
            Assign(START, "queued", "T-200", "cy", "bob"),
            # a user's assignment reads no count: the fault it arms stays armed
            Assign(START + timedelta(seconds=1), "queued", "T-100", "ada", "", degraded=True),
            # two wakes for cy at once merge into cy's queued run, and the fault is spent
            Batch(START + timedelta(seconds=2), "queued", "T-200", ("cy", "cy"), "bob"),
            Assign(START + timedelta(seconds=3), "finished", "T-200", "dee", "bob"),
        ]
        with effects.kept_as_scenario():
            effects.prepare()
            for operation in schedule:
                effects.perform(operation)
        assert driver.spent_in_batch and not driver.pending
        assert not effects.model.fault_armed
    finally:
        reference.close()
