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
from conformance.properties.rolling_window import Office, Wake, admissions_agree, schedules


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


def test_a_batch_s_admissions_agree_with_the_window_within_one_run_per_merge_of_its_task() -> None:
    """A merge may move one run into or out of the count, so a task's agent admissions may
    differ from the window's by as many of its wakes as merged; without merges, not at all."""
    instant = datetime(2026, 2, 2, 8, 0, tzinfo=UTC)

    def wake(task: str, by_agent: bool = True) -> Wake:
        return Wake(task, "a1", by_agent, instant, "finished")

    merged = [(wake("t1", by_agent=False), Outcome.COALESCED), (wake("t1"), Outcome.QUEUED)]
    one_more = Counter({("t1", True): 2})
    predicted = Counter({("t1", True): 1})
    assert admissions_agree(one_more, predicted, merged)
    assert not admissions_agree(Counter({("t1", True): 3}), predicted, merged)
    assert not admissions_agree(one_more, predicted, [(wake("t1"), Outcome.QUEUED)])
    assert not admissions_agree(Counter({("t2", True): 2}), Counter({("t2", True): 1}), merged), (
        "a merge of another task frees nothing"
    )
