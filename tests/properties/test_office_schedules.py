"""The office properties' schedules themselves: their checks judge windows over stored instants,
which assumes a clock that never goes back."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.adapters.factory import open_driver
from conformance.driver import Capability, Outcome
from conformance.properties.rolling_window import Office, Wake, judged_tasks, schedules, unmerged


@pytest.fixture(scope="module")
def office(tmp_path_factory: pytest.TempPathFactory) -> Office:
    """The reference's constants, which the schedules adapt to."""
    driver = open_driver("reference", None, tmp_path_factory.mktemp("describe"))
    try:
        description = driver.describe()
    finally:
        driver.close()
    assert description.office is not None
    return Office(description.office, Capability.RESTART in description.capabilities)


@given(data=st.data())
def test_a_schedule_never_goes_back_in_time(office: Office, data: st.DataObject) -> None:
    instants = [wake.at for wake in data.draw(schedules(office, 15), label="schedule")]
    assert instants == sorted(instants), f"a schedule goes back in time: {instants}"


def test_the_order_s_check_leaves_a_task_with_a_merge_unjudged_and_judges_the_rest() -> None:
    """A merge may move one run into or out of the count, whichever run the coalescer picks:
    a task with a merged wake is left out of the comparison, every other task stays in it."""
    instant = datetime(2026, 2, 2, 8, 0, tzinfo=UTC)

    def wake(task: str, by_agent: bool = True) -> Wake:
        return Wake(task, "a1", by_agent, instant, "finished")

    outcomes = [
        (wake("t1", by_agent=False), Outcome.COALESCED),
        (wake("t1"), Outcome.QUEUED),
        (wake("t2"), Outcome.QUEUED),
    ]
    admitted = Counter({("t1", True): 2, ("t2", True): 1})
    assert unmerged(admitted, outcomes) == Counter({("t2", True): 1})
    assert judged_tasks(outcomes) == {"t2"}
    assert judged_tasks([(wake("t1"), Outcome.COALESCED)]) == set()
