"""An office property's shrunk counterexample, written as a Gherkin scenario.

A spec owner reads it, and pastes it into a feature file to keep the find: it uses the
features' own steps (the world the property builds, then per wake the clock, the assignment
and the outcome the rolling window predicts, then the run settled as the property settled
it), and carries the criterion whose clause the counterexample broke. Against the same
implementation it fails where the property failed: at the wake the window decides otherwise,
or at the closing check of the stored windows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta

from hypothesis import note

from conformance.oracle.office_window import OfficeWindowOracle
from conformance.properties.gherkin import CRITERION_PLACEHOLDER, RESTART_STEP, SCENARIO_NOTE, Steps
from conformance.properties.rolling_window import (
    ASSIGNEES,
    ASSIGNER,
    TASKS,
    WORKSPACE,
    Office,
    Wake,
)
from conformance.spec.clause_check import ClauseViolation


@contextmanager
def kept_as_scenario(
    title: str, office: Office, wakes: Sequence[Wake], *, window_checks: bool = False
) -> Iterator[None]:
    """Run a property's example; if it fails, however it fails (a broken clause, an error the
    implementation answered, a fault), note it as a scenario: Hypothesis keeps the note of the
    shrunk example, the one it reports. The criterion is the broken clause's, else left for the
    recorder to fill (see `counterexample_of`)."""
    try:
        yield
    except Exception as error:
        violation = error if isinstance(error, ClauseViolation) else None
        criterion = violation.criterion if violation else CRITERION_PLACEHOLDER
        note(SCENARIO_NOTE + scenario(title, criterion, office, wakes, window_checks))
        raise


def scenario(
    title: str, criterion: str, office: Office, wakes: Sequence[Wake], window_checks: bool
) -> str:
    lines = [f"@{criterion}", f"Scenario: {title}, as a counterexample showed"]
    steps = Steps(lines)
    steps.add("Given", f'a workspace "{WORKSPACE}"')
    steps.add("Given", f'agent "{ASSIGNER}" in workspace "{WORKSPACE}" who may assign tasks')
    steps.add(
        "Given",
        f'agents "{ASSIGNEES[0]}" and "{ASSIGNEES[1]}" in workspace "{WORKSPACE}" '
        "who may not assign tasks",
    )
    for task_id in TASKS:
        steps.add("Given", f'a task "{task_id}" in workspace "{WORKSPACE}" with no assignee')
    oracle = office.oracle()
    for wake in wakes:
        _wake_steps(steps, oracle, wake)
    if window_checks:
        for task_id in TASKS:
            steps.add(
                "Then",
                f"no rolling window of {_seconds(office.window)} holds more than "
                f'{office.allowance} agent wakes for task "{task_id}"',
            )
    return "\n".join(lines)


def _wake_steps(steps: Steps, oracle: OfficeWindowOracle, wake: Wake) -> None:
    if wake.restart_first:
        steps.add("When", RESTART_STEP)
    steps.add("When", f'the clock reads "{_instant(wake.at)}"')
    who = f'agent "{ASSIGNER}"' if wake.by_agent else "a user"
    steps.add("When", f'{who} assigns task "{wake.task_id}" to "{wake.assignee}"')
    admitted = oracle.offer(wake.task_id, wake.at) if wake.by_agent else True
    steps.add("Then", f'the wake\'s outcome is "{"queued" if admitted else "rate_limited"}"')
    if admitted:
        steps.add("When", f'the run of that wake is marked "{wake.settle_as}"')
    else:
        steps.add("Then", "the run queue is exactly as it was before that wake")


def _instant(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def _seconds(span: timedelta) -> str:
    whole, micros = divmod(span // timedelta(microseconds=1), 1_000_000)
    return f"{whole} seconds" + (f" and {micros} microseconds" if micros else "")
