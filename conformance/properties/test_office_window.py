"""Office allowance properties, through the driver port, each check citing its clause.

(a) Every admission decision for random request instants, boundary offsets
    included, equals the rolling-window oracle's: a refusal the oracle admits
    breaks 002.1/never-refuse-early (and 001.11 or 001.4/frees-after-window when
    the decision sits on a window's edge), an admission it refuses breaks
    001.2/serial-bound.
(b) A batch of same-instant wakes admits the same number per task whatever the
    order they arrive in (001.10/count-not-order, 001.10/no-tiebreak).
(c) Read back from the stored runs alone: no window (t - W, t] ever holds more
    than N admitted agent wakes for one task (checked at the end over every
    window that ends on a stored wake, where the busiest windows end), and no
    wake is refused while fewer than N are in its window.

Restarts fall between some wakes, since the count must come from the store.
Every admitted run is moved out of `queued` at once (to a randomly chosen other
status; the count has no status filter), so that a coalescer merging into queued
runs only has nothing to merge into, and every assignment bumps the task's generation, so no
key repeats. Which runs absorb a wake is outside this spec: a merge an implementation makes
anyway stands (it must name a run that absorbed it), and the model then takes the count from
the store. The window is over the instants the implementation stored (to 0 to 6 digits), read
back after each admission, never over the instants the harness sent.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.applicability import not_applicable
from conformance.driver import Capability, Outcome
from conformance.properties import RESTARTS_PER_EXAMPLE, Budget, restart_permits
from conformance.properties.office_operations import SETTLED
from conformance.properties.office_scenario import kept_as_scenario
from conformance.properties.rolling_window import (
    ASSIGNEES,
    BUSY_TASK,
    TASKS,
    Office,
    Wake,
    admissions_predicted,
    admitted_per_task,
    agent_wake_instants,
    agent_wakes_of,
    check_stored,
    decision_cites,
    held_in_window,
    judged,
    judged_tasks,
    perform,
    performed,
    predicted,
    prepare,
    resolve,
    schedules,
    timings,
    unmerged,
)
from conformance.spec.clause_check import expect

if TYPE_CHECKING:
    from conformance.properties import Drivers


@pytest.fixture(scope="module")
def office(drivers: Drivers, budget: Budget) -> Office:
    """What the implementation reports; the oracle and the schedules adapt to it."""
    with drivers.fresh() as driver:
        description = driver.describe()
    if Capability.OFFICE not in description.capabilities or description.office is None:
        not_applicable("the implementation does not declare office")
    restartable = Capability.RESTART in description.capabilities
    return Office(
        description.office,
        restartable,
        RESTARTS_PER_EXAMPLE[budget],
        tuple(restart_permits(budget)),
    )


@given(data=st.data())
def test_admission_decisions_match_the_rolling_window(
    drivers: Drivers, office: Office, data: st.DataObject
) -> None:
    schedule = data.draw(schedules(office, 12), label="schedule")
    oracle = office.oracle()
    title = "every admission decision is the rolling window's"
    with drivers.fresh() as driver, kept_as_scenario(title, office, schedule):
        prepare(driver)
        for wake in schedule:
            cites = (
                decision_cites(oracle, wake)
                if wake.by_agent
                else ("AC-OFFICE-ASSIGN-RATE-001.1/others-admitted",)
            )
            expected = predicted(oracle, wake)
            happened = performed(driver, wake)
            outcome = happened.outcome
            if outcome is not Outcome.COALESCED:
                expect(
                    outcome is expected, cites, f"{wake!r}: {outcome.value}, not {expected.value}"
                )
            judged(oracle, wake, happened, driver)


@given(data=st.data())
def test_same_instant_wakes_are_decided_independently_of_their_order(
    drivers: Drivers, office: Office, data: st.DataObject
) -> None:
    prelude = data.draw(schedules(office, 2), label="prelude")
    timing = data.draw(timings(office.window), label="batch timing")
    instant = resolve(timing, prelude[-1].at, agent_wakes_of(prelude, BUSY_TASK), office.window)
    batch = data.draw(
        st.lists(
            st.builds(
                Wake,
                task_id=st.sampled_from(TASKS),
                assignee=st.sampled_from(ASSIGNEES),
                by_agent=st.sampled_from([True, True, True, False]),
                at=st.just(instant),
                settle_as=st.sampled_from(SETTLED),
            ),
            min_size=2,
            max_size=office.allowance + 3,
        ),
        label="batch",
    )
    reordered = data.draw(st.permutations(batch), label="reordered batch")
    cites: tuple[str, ...] = (
        "AC-OFFICE-ASSIGN-RATE-001.2/serial-bound",
        "AC-OFFICE-ASSIGN-RATE-002.1/never-refuse-early",
        "AC-OFFICE-ASSIGN-RATE-001.10/no-tiebreak",
    )
    title = "same-instant wakes admit as many whatever their order"
    for order in (batch, reordered):
        with kept_as_scenario(title, office, [*prelude, *order]):
            with drivers.fresh() as driver:
                prepare(driver)
                oracle = office.oracle()
                for wake in prelude:
                    judged(oracle, wake, performed(driver, wake), driver)
                outcomes = [(wake, perform(driver, wake)) for wake in order]
            admitted = unmerged(admitted_per_task(outcomes), outcomes)
            expected = unmerged(admissions_predicted(oracle, outcomes), outcomes)
            if judged_tasks(outcomes):
                expect(
                    admitted == expected,
                    cites,
                    f"order {order!r} admitted {dict(admitted)}, the window {dict(expected)}",
                )
        cites = (
            "AC-OFFICE-ASSIGN-RATE-001.10/count-not-order",
            "AC-OFFICE-ASSIGN-RATE-001.10/no-tiebreak",
        )


@given(data=st.data())
def test_no_window_ever_holds_more_than_the_allowance(
    drivers: Drivers, office: Office, data: st.DataObject
) -> None:
    window, allowance = office.window, office.allowance
    schedule = data.draw(schedules(office, 15), label="schedule")
    admitted: Counter[str] = Counter()
    merged: Counter[str] = Counter()
    title = "no stored window holds more than the allowance"
    with kept_as_scenario(title, office, schedule, window_checks=True):
        with drivers.fresh() as driver:
            prepare(driver)
            for wake in schedule:
                outcome = perform(driver, wake)
                if outcome is Outcome.QUEUED:
                    admitted[wake.task_id] += 1 if wake.by_agent else 0
                    continue
                if outcome is Outcome.COALESCED:
                    merged[wake.task_id] += 1
                    continue
                instants = agent_wake_instants(driver.list_runs(), wake.task_id)
                held = held_in_window(instants, wake.at, window)
                expect(
                    held >= allowance,
                    (
                        "AC-OFFICE-ASSIGN-RATE-002.1/never-refuse-early",
                        "AC-OFFICE-ASSIGN-RATE-001.11/half-open",
                    ),
                    f"{wake!r} refused with only {held} in its window",
                )
            runs = driver.list_runs()
        for task_id in TASKS:
            instants = agent_wake_instants(runs, task_id)
            check_stored(instants, admitted[task_id], merged[task_id], task_id, office)
