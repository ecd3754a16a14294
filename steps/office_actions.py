"""Office setup and actions (REQ-OFFICE-ASSIGN-RATE-001 to -003): the Given and When steps.

When steps act and assert nothing; a Given step that builds wakes says what
they must have been ("each wake queued") and checks it, so that no later step
rests on a setup nobody verified. Every action goes through `OfficeScene.act`,
which notes what the implementation showed just before it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from functools import partial

from pytest_bdd import given, parsers, when

from conformance.applicability import require
from conformance.driver import (
    AssignmentResult,
    Capability,
    ConcurrentCall,
    Outcome,
    Producer,
    RunStatus,
    WakeResult,
)
from conformance.oracle.office_shapes import (
    Shape,
    parse_payload,
    shape_of,
)
from conformance.spec.clause_check import expect, port_requires, port_value, scenario_value
from conformance.steps.common import _DURATION, parse_duration, quoted
from conformance.steps.office_scene import (
    COUNT,
    OfficeScene,
    Wake,
    outcome_cites,
)

_TIMES = rf"(?P<count>(?P<times>{COUNT}) times|as many times as the allowance)"
_SPACING = rf"(?:, {_DURATION} apart| at the same instant)"
_WHO = (
    r'(?P<who>agent "[^"]*"|agents "[^"]*" and "[^"]*" in turn|a user'
    r"|an internal caller with an empty acting agent id)"
)
_TARGETS = (
    r'task "(?P<task_id>[^"]+)" '
    r'(?P<targets>to "[^"]*"|in turn to (?:"[^"]*"|nobody)(?:(?:, | and )(?:"[^"]*"|nobody))+)'
    r"(?P<keyless> with its generation unresolvable)?"
    rf"(?:,? (?:{_TIMES}){_SPACING})?"
)
_ASSIGNMENT = rf"{_WHO} assigns? {_TARGETS}"
_VERIFIED_ASSIGNMENT = rf"{_WHO} ha(?:s|ve) assigned {_TARGETS}, each wake queued"


# --------------------------------------------------------------------------
# Performing wakes
# --------------------------------------------------------------------------


def assign(office: OfficeScene, task_id: str, assignee: str, acting: str, *, keyless: bool) -> Wake:
    """One assignee mutation; its wake is in scope exactly when an agent acts."""
    driver = office.driver
    if keyless:
        require(driver, Capability.HOOK_KEYLESS_ASSIGNMENT)
        result = driver.assign_task_keyless(task_id, assignee, acting_agent_id=acting)
    else:
        result = driver.assign_task(task_id, assignee, acting_agent_id=acting)
    port_requires(
        result.task_id == task_id,
        f"the mutation answered for task {result.task_id!r}, not {task_id!r}",
    )
    office.pending.append(partial(check_assignee_committed, result, assignee))
    office.generations[task_id] = result.generation
    office.series_generations.append((task_id, result.generation))
    if not assignee:
        return Wake(result.wake, Shape.UNASSIGNMENT)
    return office.evaluate(Shape.AGENT if acting else Shape.USER, result.wake, task_id)


def check_assignee_committed(result: AssignmentResult, assignee: str) -> None:
    """A refused wake must leave the new assignee stored (001.7); any other miss is the port's.
    Made by the next Then step (When steps judge nothing)."""
    if result.assignee_agent_id == assignee:
        return
    detail = (
        f"assigning task {result.task_id!r} to {assignee!r} left {result.assignee_agent_id!r} "
        "as its assignee"
    )
    if result.wake is not None and result.wake.outcome is Outcome.RATE_LIMITED:
        expect(False, "AC-OFFICE-ASSIGN-RATE-001.7/mutation-kept", detail)
    port_requires(False, detail)


def deliver(office: OfficeScene, delivery: tuple[str, str, str, str | None]) -> Wake:
    """A wake handed straight to the pipeline, kept so that it can be delivered again."""
    agent_id, reason, payload, dedup_key = delivery
    office.last_delivery = delivery
    result = office.driver.enqueue_wake(agent_id, reason, payload, dedup_key=dedup_key)
    task_id = (parse_payload(payload) or {}).get("task_id")
    return office.evaluate(shape_of(reason, payload), result, task_id)


def produce(office: OfficeScene, producer: str, task_id: str, agent_id: str) -> Wake:
    result: WakeResult = office.driver.produce_wake(producer, task_id, agent_id)
    return Wake(result, Shape.PRODUCER)


def series(
    office: OfficeScene, count: int, gap: timedelta, make: Callable[[int], Wake]
) -> list[Wake]:
    """`count` wakes, `gap` apart: the first at the current instant, the clock left at the last."""
    wakes: list[Wake] = []
    for index in range(count):
        if index:
            office.driver.advance_clock(gap)
        wakes.append(make(index))
    return wakes


def series_length(office: OfficeScene, times: str | None, count: str | None) -> int:
    """A count (in N or literal), the allowance the implementation reports, or one for no
    count at all."""
    if count is None:
        return 1
    return office.count(times) if times is not None else office.constants.allowance


def series_gap(duration: str | None) -> timedelta:
    return parse_duration(duration) if duration is not None else timedelta(0)


def acting_agents(who: str) -> list[str]:
    """The acting agent ids a phrase names; a user or internal caller acts with ""."""
    return quoted(who) if who.startswith("agent") else [""]


def assignees(targets: str) -> list[str]:
    """The assignees a phrase names, in turn; "nobody" is an unassignment."""
    return [
        "" if token == "nobody" else token.strip('"')
        for token in re.findall(r'"[^"]*"|nobody', targets)
    ]


def assignment_series(
    office: OfficeScene,
    who: str,
    task_id: str,
    targets: str,
    keyless: str | None,
    count: str | None,
    times: str | None,
    duration: str | None,
) -> None:
    actors, in_turn = acting_agents(who), assignees(targets)

    def one(index: int) -> Wake:
        assignee, acting = in_turn[index % len(in_turn)], actors[index % len(actors)]
        return assign(office, task_id, assignee, acting, keyless=keyless is not None)

    repetitions = series_length(office, times, count)
    office.act(lambda: series(office, repetitions, series_gap(duration), one))


# --------------------------------------------------------------------------
# Setup
# --------------------------------------------------------------------------


@given(
    parsers.re(
        r"the allowance is N = (?P<allowance>\d+) agent wakes per task in any rolling "
        rf"{_DURATION}"
    )
)
def allowance_stated(office: OfficeScene, allowance: str) -> None:
    """The spec's N, written once in the feature's Background: every count in N after it
    reads this one, never the figure the implementation reports (which 002.6 judges)."""
    office.allowance = int(allowance)


@given(parsers.parse('a workspace "{workspace_id}"'))
def a_workspace(office: OfficeScene, workspace_id: str) -> None:
    office.driver.create_workspace(workspace_id)
    office.workspace_id = workspace_id
    office.identifiers.add(workspace_id)


@given(
    parsers.re(
        r'agents? (?P<names>"[^"]+"(?:(?:, | and )"[^"]+")*) in workspace "(?P<workspace_id>[^"]+)"'
        r" who may (?P<negation>not )?assign tasks"
    )
)
def agents_in_workspace(
    office: OfficeScene, names: str, workspace_id: str, negation: str | None
) -> None:
    for agent_id in quoted(names):
        office.driver.create_agent(workspace_id, agent_id, can_assign_tasks=negation is None)
        office.identifiers.add(agent_id)


@given(parsers.parse('a task "{task_id}" in workspace "{workspace_id}" with no assignee'))
def a_task(office: OfficeScene, task_id: str, workspace_id: str) -> None:
    view = office.driver.create_task(workspace_id, task_id)
    port_requires(
        view.assignment_generation == 0 and view.assignee_agent_id == "",
        f"a new task starts unassigned at generation 0, the implementation answered {view}",
    )
    office.generations[task_id] = 0
    office.identifiers.add(task_id)


@given(parsers.parse('agent "{agent_id}" has an open office session on task "{task_id}"'))
@when(parsers.parse('agent "{agent_id}" opens an office session on task "{task_id}"'))
def open_office_session(office: OfficeScene, agent_id: str, task_id: str) -> None:
    office.driver.open_office_session(agent_id, task_id)
    sessions = office.driver.mutation_effects().office_sessions
    port_requires(
        any((s.agent_id, s.task_id) == (agent_id, task_id) for s in sessions),
        f"an office session of {agent_id!r} on {task_id!r} was opened, but the implementation "
        f"reports none: {sessions}",
    )


@given(parsers.re(_VERIFIED_ASSIGNMENT))
def verified_assignments(
    office: OfficeScene,
    who: str,
    task_id: str,
    targets: str,
    keyless: str | None,
    count: str | None,
    times: str | None,
    duration: str | None,
) -> None:
    """A series the rest of the scenario builds on: every wake of it must have been admitted."""
    assignment_series(office, who, task_id, targets, keyless, count, times, duration)
    for number, wake in enumerate(office.wakes, start=1):
        expect(
            wake.outcome == "queued",
            outcome_cites(wake, ["queued"]),
            f"setting up, wake {number} of the series was to be admitted (queued), "
            f"observed {wake.outcome!r}",
        )
    office.settle()


# --------------------------------------------------------------------------
# Actions
# --------------------------------------------------------------------------


@when(parsers.re(_ASSIGNMENT))
def assignments(
    office: OfficeScene,
    who: str,
    task_id: str,
    targets: str,
    keyless: str | None,
    count: str | None,
    times: str | None,
    duration: str | None,
) -> None:
    """One assignment, or a series of them, taking turns among actors and assignees."""
    assignment_series(office, who, task_id, targets, keyless, count, times, duration)


@when(
    parsers.re(
        r'agent "(?P<acting>[^"]+)" assigns task "(?P<task_id>[^"]+)" to '
        r'(?P<names>"[^"]+"(?:(?:, | and )"[^"]+")*) at once'
    )
)
def concurrent_assignments(office: OfficeScene, acting: str, task_id: str, names: str) -> None:
    """The assignments evaluated at once (run_concurrently), each answer a wake in scope."""
    require(office.driver, Capability.CONCURRENCY)
    calls = [
        ConcurrentCall(
            operation="assign_task",
            arguments={"task_id": task_id, "assignee_agent_id": who, "acting_agent_id": acting},
        )
        for who in quoted(names)
    ]

    def batch() -> list[Wake]:
        wakes = []
        for answer in office.driver.run_concurrently(calls):
            port_requires(answer.ok, f"a concurrent assignment failed: {answer.message}")
            result = AssignmentResult.model_validate(answer.result)
            wakes.append(office.evaluate(Shape.AGENT, result.wake, task_id))
        return wakes

    office.act(batch)


@when(parsers.parse('agent "{acting}" unassigns task "{task_id}"'))
def unassignment(office: OfficeScene, acting: str, task_id: str) -> None:
    office.act(lambda: [assign(office, task_id, "", acting, keyless=False)])


@when(
    parsers.re(
        r'a "(?P<reason>[^"]+)" wake for agent "(?P<agent_id>[^"]+)" is enqueued '
        r'(?:without a key|with key "(?P<dedup_key>[^"]+)")'
        rf"(?:, (?P<times>{COUNT}) times{_SPACING})?, with payload: (?P<payload>.*)"
    )
)
def raw_wake(
    office: OfficeScene,
    reason: str,
    agent_id: str,
    dedup_key: str | None,
    times: str | None,
    duration: str | None,
    payload: str,
) -> None:
    delivery = (agent_id, reason, payload, dedup_key)
    count = office.count(times or "1")
    office.act(
        lambda: series(office, count, series_gap(duration), lambda _: deliver(office, delivery))
    )


@when(
    parsers.re(
        r"(?P<which>the newest run's|the oldest run's|the same) wake is delivered again"
        rf"(?:, (?P<times>{COUNT}) times{_SPACING})?"
    )
)
def delivered_again(
    office: OfficeScene, which: str, times: str | None, duration: str | None
) -> None:
    """A redelivery: a stored run's wake (its payload and key), or the last raw wake."""
    if which == "the same":
        delivery = scenario_value(office.last_delivery, "no wake has been enqueued directly yet")
    else:
        runs = office.driver.list_runs()
        scenario_value(runs or None, "there is no run whose wake could be delivered again")
        run = runs[-1] if which.startswith("the newest") else runs[0]
        delivery = (run.agent_id, run.reason, run.payload, run.dedup_key)
    count = office.count(times or "1")
    office.act(
        lambda: series(office, count, series_gap(duration), lambda _: deliver(office, delivery))
    )


@when(parsers.parse('producer "{producer}" emits a wake for task "{task_id}" to "{agent_id}"'))
def producer_emits(office: OfficeScene, producer: str, task_id: str, agent_id: str) -> None:
    office.act(lambda: [produce(office, producer, task_id, agent_id)])


@when(
    parsers.re(
        r'every producer but the assignee mutation emits a wake for task "(?P<task_id>[^"]+)" '
        rf'to "(?P<agent_id>[^"]+)", {_DURATION} apart'
    )
)
def actorless_producers_emit(
    office: OfficeScene, task_id: str, agent_id: str, duration: str
) -> None:
    """Each reported producer other than the mutation, in the order reported."""
    producers = [p for p in office.constants.producers if p != Producer.ASSIGNEE_MUTATION]
    office.act(
        lambda: series(
            office,
            len(producers),
            parse_duration(duration),
            lambda index: produce(office, producers[index], task_id, agent_id),
        )
    )


@when(
    parsers.parse(
        'every reported producer emits a wake to agent "{agent_id}" for a task of its own, '
        'the mutation acting as agent "{acting}"'
    )
)
def every_producer_emits(office: OfficeScene, agent_id: str, acting: str) -> None:
    """Each producer gets a fresh task, and the wakes come further apart than the coalescing
    window, so that none can be merged into or deduplicated by another however the coalescer
    groups its wakes (which is not this spec's to say)."""
    apart = timedelta(seconds=office.constants.coalesce_window_seconds + 1)

    def emit_all() -> list[Wake]:
        for turn, producer in enumerate(office.constants.producers):
            if turn:
                office.driver.advance_clock(apart)
            task_id = f"{producer}-task"
            office.driver.create_task(office.workspace_id, task_id)
            office.identifiers.add(task_id)
            if producer == Producer.ASSIGNEE_MUTATION:
                wake = assign(office, task_id, agent_id, acting, keyless=False)
            else:
                wake = produce(office, producer, task_id, agent_id)
            office.producer_wakes[producer] = wake
        return list(office.producer_wakes.values())

    office.act(emit_all)


@when("the next count read fails")
def next_count_read_fails(office: OfficeScene) -> None:
    require(office.driver, Capability.HOOK_COUNT_READ_FAILURE)
    office.driver.fail_next_count_read()
    office.fault_armed = True


@when(parsers.parse('every run in the queue is marked "{status}"'))
def mark_every_run(office: OfficeScene, status: RunStatus) -> None:
    for run in office.driver.list_runs():
        office.driver.set_run_status(run.run_id, status)


@when(parsers.parse('the run of that wake is marked "{status}"'))
def mark_the_wake_s_run(office: OfficeScene, status: RunStatus) -> None:
    """Settle the run the last wake inserted, as the property checks do after each admission."""
    result = office.last_wake().result
    run_id = port_value(result.run_id if result else None, "the wake names no run to mark")
    office.driver.set_run_status(run_id, status)


@when("the newest run is deleted")
def delete_newest_run(office: OfficeScene) -> None:
    runs = office.driver.list_runs()
    scenario_value(runs or None, "there is no run to delete")
    office.runs_before_deletion = (runs, runs[-1].run_id)
    office.driver.delete_run(runs[-1].run_id)


@when("the clock reaches one reported window after the oldest run's request instant")
def clock_one_window_after_oldest(office: OfficeScene) -> None:
    runs = office.driver.list_runs()
    scenario_value(runs or None, "there is no run to measure the window from")
    window = timedelta(seconds=office.constants.window_seconds)
    office.driver.set_clock(runs[0].requested_at + window)
