"""Office step definitions (REQ-OFFICE-ASSIGN-RATE-001 to -003).

Every step talks to the driver port only. Per-scenario state lives in the
`office` fixture: the wakes of the latest action, what the queue and the
mutation effects looked like just before it, and the telemetry and warning
baselines that "since noted" steps compare against.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, cast

import pytest
from prometheus_client.parser import text_string_to_metric_families
from pytest_bdd import given, parsers, then, when

from conformance.driver import (
    AssignmentResult,
    Capability,
    Driver,
    MutationEffects,
    OfficeConstants,
    Outcome,
    Producer,
    PublishedEvent,
    RateLimitReason,
    Run,
    RunStatus,
    SessionInterrupt,
    WakeResult,
    WarningLog,
)
from conformance.pytest_plugin import require
from steps.common import _DURATION, parse_duration

RATE_LIMIT_SAMPLE = "office_assignment_rate_limit_total"
NO_WAKE = "no wake"
ABSENT = "(none)"

SampleKey = tuple[str, tuple[tuple[str, str], ...]]


# --------------------------------------------------------------------------
# Scenario state
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Delivery:
    """One wake handed straight to the enqueue pipeline, kept so it can be delivered again."""

    agent_id: str
    reason: str
    payload: str
    dedup_key: str | None


@dataclass
class OfficeScene:
    """What one scenario has done and seen so far."""

    driver: Driver
    wakes: list[WakeResult | None] = field(default_factory=list)
    runs_before_last_wake: list[Run] = field(default_factory=list)
    effects_before_last_mutation: MutationEffects | None = None
    last_delivery: Delivery | None = None
    counters_noted: dict[SampleKey, float] = field(default_factory=dict)
    warnings_noted: int = 0
    checked_warnings: list[WarningLog] = field(default_factory=list)
    reading: str | None = None
    producer_wakes: dict[Producer, WakeResult | None] = field(default_factory=dict)
    workspace_id: str = ""
    identifiers: set[str] = field(default_factory=set)

    def constants(self) -> OfficeConstants:
        office = self.driver.describe().office
        assert office is not None, (
            "the implementation declares Office but reports no Office constants"
        )
        return office

    def note_counters_and_warnings(self) -> None:
        self.counters_noted = read_counters(self.driver.telemetry())
        self.warnings_noted = len(self.driver.warning_logs())

    def warnings_since_noted(self) -> list[WarningLog]:
        return self.driver.warning_logs()[self.warnings_noted :]

    def last_wake(self) -> WakeResult | None:
        assert self.wakes, "no wake has been produced yet in this scenario"
        return self.wakes[-1]


@pytest.fixture
def office(driver: Driver) -> OfficeScene:
    require(driver, Capability.OFFICE)
    scene = OfficeScene(driver=driver)
    scene.note_counters_and_warnings()
    return scene


# --------------------------------------------------------------------------
# Parsing helpers
# --------------------------------------------------------------------------

_QUOTED = re.compile(r'"([^"]*)"')
_MOVE = re.compile(r"(\w+) \+(\d+)")
_TIMES = r"(?P<count>(?P<times>\d+) times|as many times as the allowance)"
_SPACING = rf"(?:, {_DURATION} apart| at the same instant)"


def quoted_names(text: str) -> list[str]:
    """The quoted names in `"ada", "bob" and "cy"`."""
    return _QUOTED.findall(text)


def read_counters(text: str) -> dict[SampleKey, float]:
    """Every `_total` sample of the Prometheus text, keyed by sample name and labels."""
    counters: dict[SampleKey, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.endswith("_total"):
                counters[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return counters


def counter_deltas(
    before: dict[SampleKey, float], after: dict[SampleKey, float], sample_name: str
) -> dict[tuple[tuple[str, str], ...], float]:
    """The non-zero changes of one counter, label set by label set."""
    keys = {key for key in (*before, *after) if key[0] == sample_name}
    deltas = {key[1]: after.get(key, 0.0) - before.get(key, 0.0) for key in keys}
    return {labels: delta for labels, delta in deltas.items() if delta != 0}


def parse_labels(text: str) -> tuple[tuple[str, str], ...]:
    """`reason="task_assigned", kind="windowed"` as a sorted label tuple."""
    pairs = re.findall(r'(\w+)="([^"]*)"', text)
    return tuple(sorted(pairs))


def parse_payload(text: str) -> dict[str, Any] | None:
    """The stored payload as a JSON object, or None when it is not one."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def expected_json(text: str) -> Any:
    """A value written in a feature as a JSON literal, e.g. "T-100", 42 or null."""
    try:
        return json.loads(text)
    except ValueError as error:
        raise AssertionError(f"the feature file's value {text!r} is not a JSON literal") from error


def outcome_of(wake: WakeResult | None) -> str:
    return NO_WAKE if wake is None else wake.outcome.value


def series_length(office: OfficeScene, times: str | None) -> int:
    """A literal count, or the allowance the implementation reports."""
    return int(times) if times is not None else office.constants().allowance


def series_gap(duration: str | None) -> timedelta:
    return parse_duration(duration) if duration is not None else timedelta(0)


def runs_for_task(runs: list[Run], task_id: str) -> list[Run]:
    """Runs whose stored payload names `task_id` as a JSON string."""
    return [run for run in runs if (parse_payload(run.payload) or {}).get("task_id") == task_id]


def counts_as_agent_wake(run: Run, task_id: str) -> bool:
    payload = parse_payload(run.payload) or {}
    return (
        run.reason == "task_assigned"
        and payload.get("task_id") == task_id
        and payload.get("actor_type") == "agent"
    )


def describe_runs(runs: list[Run]) -> str:
    return (
        "\n".join(
            f"  {run.run_id} agent={run.agent_id} at={run.requested_at.isoformat()} "
            f"status={run.status} merged={run.coalesced_count} key={run.dedup_key} {run.payload}"
            for run in runs
        )
        or "  (no runs)"
    )


# --------------------------------------------------------------------------
# Actions, shared by the step functions below
# --------------------------------------------------------------------------


def perform_assignment(
    office: OfficeScene, task_id: str, assignee: str, acting: str, *, keyless: bool
) -> WakeResult | None:
    """One assignee mutation, remembering the queue and effects it started from."""
    driver = office.driver
    office.runs_before_last_wake = driver.list_runs()
    office.effects_before_last_mutation = driver.mutation_effects()
    result: AssignmentResult
    if keyless:
        require(driver, Capability.HOOK_KEYLESS_ASSIGNMENT)
        result = driver.assign_task_keyless(task_id, assignee, acting_agent_id=acting)
    else:
        result = driver.assign_task(task_id, assignee, acting_agent_id=acting)
    assert result.task_id == task_id and result.assignee_agent_id == assignee, (
        f"the mutation answered for task {result.task_id!r} / assignee "
        f"{result.assignee_agent_id!r}, expected {task_id!r} / {assignee!r}"
    )
    return result.wake


def perform_delivery(office: OfficeScene, delivery: Delivery) -> WakeResult:
    office.runs_before_last_wake = office.driver.list_runs()
    office.last_delivery = delivery
    return office.driver.enqueue_wake(
        delivery.agent_id, delivery.reason, delivery.payload, dedup_key=delivery.dedup_key
    )


def repeat(office: OfficeScene, count: int, gap: timedelta, action: Any) -> None:
    """Run `action(i)` `count` times, `gap` apart, keeping every wake as the latest series."""
    wakes: list[WakeResult | None] = []
    for index in range(count):
        if index:
            office.driver.advance_clock(gap)
        wakes.append(action(index))
    office.wakes = wakes


# --------------------------------------------------------------------------
# Setup
# --------------------------------------------------------------------------


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
    for agent_id in quoted_names(names):
        office.driver.create_agent(workspace_id, agent_id, can_assign_tasks=negation is None)
        office.identifiers.add(agent_id)


@given(parsers.parse('a task "{task_id}" in workspace "{workspace_id}" with no assignee'))
def a_task(office: OfficeScene, task_id: str, workspace_id: str) -> None:
    view = office.driver.create_task(workspace_id, task_id)
    assert view.assignment_generation == 0 and view.assignee_agent_id == "", (
        f"a new task must start unassigned at generation 0, got {view}"
    )
    office.identifiers.add(task_id)


@given(parsers.parse('agent "{agent_id}" has an open office session on task "{task_id}"'))
@when(parsers.parse('agent "{agent_id}" opens an office session on task "{task_id}"'))
def open_office_session(office: OfficeScene, agent_id: str, task_id: str) -> None:
    office.driver.open_office_session(agent_id, task_id)


# --------------------------------------------------------------------------
# Actions
# --------------------------------------------------------------------------

_ASSIGNMENT = (
    r'(?P<who>agent "[^"]*"|agents "[^"]*" and "[^"]*" in turn|a user'
    r"|an internal caller with an empty acting agent id) assigns? "
    r'task "(?P<task_id>[^"]+)" '
    r'(?P<targets>to "[^"]*"|in turn to (?:"[^"]*"|nobody)(?:(?:, | and )(?:"[^"]*"|nobody))+)'
    r"(?P<keyless> with its generation unresolvable)?"
    rf"(?:,? (?:{_TIMES}){_SPACING})?"
)


def acting_agents(who: str) -> list[str]:
    """The acting agent ids a phrase names; a user or internal caller acts with ""."""
    return quoted_names(who) if who.startswith("agent") else [""]


def assignees(targets: str) -> list[str]:
    """The assignees a phrase names, in turn; "nobody" is an unassignment."""
    return [
        "" if token == "nobody" else token.strip('"')
        for token in re.findall(r'"[^"]*"|nobody', targets)
    ]


@given(parsers.re(_ASSIGNMENT))
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
    actors, targets_in_turn = acting_agents(who), assignees(targets)
    repetitions = 1 if count is None else series_length(office, times)

    def assign(index: int) -> WakeResult | None:
        return perform_assignment(
            office,
            task_id,
            targets_in_turn[index % len(targets_in_turn)],
            actors[index % len(actors)],
            keyless=keyless is not None,
        )

    repeat(office, repetitions, series_gap(duration), assign)


@when(parsers.parse('agent "{acting}" unassigns task "{task_id}"'))
def unassignment(office: OfficeScene, acting: str, task_id: str) -> None:
    office.wakes = [perform_assignment(office, task_id, "", acting, keyless=False)]


@when(
    parsers.re(
        r'a "(?P<reason>[^"]+)" wake for agent "(?P<agent_id>[^"]+)" is enqueued '
        r'(?:without a key|with key "(?P<dedup_key>[^"]+)"), with payload: (?P<payload>.*)'
    )
)
def raw_wake(
    office: OfficeScene, reason: str, agent_id: str, dedup_key: str | None, payload: str
) -> None:
    delivery = Delivery(agent_id, reason, payload, dedup_key)
    office.wakes = [perform_delivery(office, delivery)]


@when(
    parsers.re(
        r"(?P<which>the newest run's|the oldest run's|the same) wake is delivered again"
        rf"(?:, (?P<times>\d+) times{_SPACING})?"
    )
)
def delivered_again(
    office: OfficeScene, which: str, times: str | None, duration: str | None
) -> None:
    """A redelivery: a stored run's wake (its payload and key), or the last raw wake."""
    if which == "the same":
        assert office.last_delivery is not None, "no wake has been enqueued directly yet"
        delivery = office.last_delivery
    else:
        runs = office.driver.list_runs()
        assert runs, "there is no run whose wake could be delivered again"
        run = runs[-1] if which.startswith("the newest") else runs[0]
        delivery = Delivery(run.agent_id, run.reason, run.payload, run.dedup_key)
    repeat(
        office, int(times or 1), series_gap(duration), lambda _: perform_delivery(office, delivery)
    )


@when(parsers.parse('producer "{producer}" emits a wake for task "{task_id}" to "{agent_id}"'))
def producer_emits(office: OfficeScene, producer: str, task_id: str, agent_id: str) -> None:
    office.runs_before_last_wake = office.driver.list_runs()
    office.wakes = [office.driver.produce_wake(Producer(producer), task_id, agent_id)]


@when(
    parsers.parse(
        'every reported producer emits a wake to agent "{agent_id}" for a task of its own, '
        'the mutation acting as agent "{acting}"'
    )
)
def every_producer_emits(office: OfficeScene, agent_id: str, acting: str) -> None:
    """Each producer gets a fresh task, so no wake can be merged into or deduplicated by another."""
    for producer in office.constants().producers:
        task_id = f"{producer.value}-task"
        office.driver.create_task(office.workspace_id, task_id)
        office.identifiers.add(task_id)
        if producer is Producer.ASSIGNEE_MUTATION:
            wake = perform_assignment(office, task_id, agent_id, acting, keyless=False)
        else:
            wake = office.driver.produce_wake(producer, task_id, agent_id)
        office.producer_wakes[producer] = wake


@when("the next count read fails")
def next_count_read_fails(office: OfficeScene) -> None:
    require(office.driver, Capability.HOOK_COUNT_READ_FAILURE)
    office.driver.fail_next_count_read()


@when(parsers.parse('every run in the queue is marked "{status}"'))
def mark_every_run(office: OfficeScene, status: str) -> None:
    for run in office.driver.list_runs():
        office.driver.set_run_status(run.run_id, cast(RunStatus, status))


@when("the newest run is deleted")
def delete_newest_run(office: OfficeScene) -> None:
    runs = office.driver.list_runs()
    assert runs, "there is no run to delete"
    office.driver.delete_run(runs[-1].run_id)


@when("the clock reaches one reported window after the oldest run's request instant")
def clock_one_window_after_oldest_run(office: OfficeScene) -> None:
    """Uses the stored instant and the reported window, so no constant is assumed here."""
    runs = office.driver.list_runs()
    assert runs, "the queue holds no run"
    window = timedelta(seconds=office.constants().window_seconds)
    office.driver.set_clock(runs[0].requested_at + window)


@given("the counters and warnings are noted")
@when("the counters and warnings are noted")
def counters_and_warnings_noted(office: OfficeScene) -> None:
    office.note_counters_and_warnings()


@when("the operator reads the telemetry surface")
def operator_reads_telemetry(office: OfficeScene) -> None:
    office.reading = office.driver.telemetry()


# --------------------------------------------------------------------------
# Outcomes
# --------------------------------------------------------------------------


@then(parsers.parse('the wake\'s outcome is "{expected}"'))
def wake_outcome(office: OfficeScene, expected: str) -> None:
    Outcome(expected)
    observed = office.last_wake()
    assert observed is not None, (
        f"expected a wake reported as {expected!r}, but no wake was reported"
    )
    assert observed.outcome.value == expected, (
        f"expected outcome {expected!r}, observed {observed.outcome.value!r} ({observed})"
    )


@then(parsers.parse('each of those wakes was "{expected}"'))
def each_wake_outcome(office: OfficeScene, expected: str) -> None:
    observed = [outcome_of(wake) for wake in office.wakes]
    assert observed and all(outcome == expected for outcome in observed), (
        f"expected every wake of the series to be {expected!r}, observed {observed}"
    )


@then(
    parsers.re(
        r"wakes? (?P<first>\d+)(?: to (?P<last>\d+))? of that series (?:was|were) "
        r'"(?P<expected>[^"]+)"'
    )
)
def series_range_outcome(office: OfficeScene, first: str, last: str | None, expected: str) -> None:
    start, stop = int(first), int(last or first)
    observed = [outcome_of(wake) for wake in office.wakes]
    assert len(observed) >= stop, f"the series has only {len(observed)} wakes: {observed}"
    selected = observed[start - 1 : stop]
    assert all(outcome == expected for outcome in selected), (
        f"expected wakes {start} to {stop} to be {expected!r}; the whole series was "
        + ", ".join(f"{i}:{outcome}" for i, outcome in enumerate(observed, start=1))
    )


@then(parsers.parse("the wakes of that series were, in order: {expected}"))
def series_outcomes_in_order(office: OfficeScene, expected: str) -> None:
    wanted = [item.strip() for item in expected.split(",")]
    observed = [outcome_of(wake) for wake in office.wakes]
    assert observed == wanted, f"expected the series {wanted}, observed {observed}"


@then("the assignment produced no wake")
def assignment_produced_no_wake(office: OfficeScene) -> None:
    observed = office.last_wake()
    assert observed is None, f"an unassignment must produce no wake at all, observed {observed}"


@then("the wake names no run")
def wake_names_no_run(office: OfficeScene) -> None:
    observed = office.last_wake()
    assert observed is not None and observed.run_id is None, (
        f"a refused wake inserts no run, so it can name none; observed {observed}"
    )


# --------------------------------------------------------------------------
# The run queue
# --------------------------------------------------------------------------


@then(parsers.re(r'the queue holds (?P<count>\d+) runs? for task "(?P<task_id>[^"]+)"'))
def queue_holds_runs_for_task(office: OfficeScene, count: str, task_id: str) -> None:
    runs = office.driver.list_runs()
    matching = runs_for_task(runs, task_id)
    assert len(matching) == int(count), (
        f"expected {count} runs for task {task_id!r}, found {len(matching)}:\n{describe_runs(runs)}"
    )


@then("the run queue is exactly as it was before that wake")
def queue_unchanged(office: OfficeScene) -> None:
    after = office.driver.list_runs()
    assert after == office.runs_before_last_wake, (
        "the wake changed the run queue.\nbefore:\n"
        f"{describe_runs(office.runs_before_last_wake)}\nafter:\n{describe_runs(after)}"
    )


@then("every run in the queue has no dedup key")
def runs_have_no_key(office: OfficeScene) -> None:
    runs = office.driver.list_runs()
    keyed = [run for run in runs if run.dedup_key is not None]
    assert runs and not keyed, f"expected only keyless runs:\n{describe_runs(runs)}"


@then(parsers.re(r"the newest run has absorbed (?P<count>\d+) coalesced wakes?"))
def newest_run_absorbed(office: OfficeScene, count: str) -> None:
    runs = office.driver.list_runs()
    assert runs and runs[-1].coalesced_count == int(count), (
        f"expected the newest run to have absorbed {count} wakes:\n{describe_runs(runs)}"
    )


@then(parsers.re(r"the (?P<count>\d+) newest runs share one request instant"))
def newest_runs_share_instant(office: OfficeScene, count: str) -> None:
    runs = office.driver.list_runs()[-int(count) :]
    instants = {run.requested_at for run in runs}
    assert len(runs) == int(count) and len(instants) == 1, (
        f"expected the {count} newest runs to share one request instant:\n{describe_runs(runs)}"
    )


@then(
    parsers.re(
        rf"no rolling window of {_DURATION} holds more than (?P<allowance>\d+) agent wakes "
        r'for task "(?P<task_id>[^"]+)"'
    )
)
def no_window_over_allowance(
    office: OfficeScene, duration: str, allowance: str, task_id: str
) -> None:
    """The fullest windows are those ending at a stored agent wake, so only those are checked."""
    window = parse_duration(duration)
    runs = office.driver.list_runs()
    instants = [run.requested_at for run in runs if counts_as_agent_wake(run, task_id)]
    fullest = max(
        (sum(1 for other in instants if end - window < other <= end) for end in instants), default=0
    )
    assert fullest <= int(allowance), (
        f"a rolling window of {duration} holds {fullest} agent wakes for {task_id!r}:\n"
        f"{describe_runs(runs)}"
    )


def chosen_run(office: OfficeScene, which: str) -> Run:
    runs = office.driver.list_runs()
    if which == "the newest run":
        assert runs, "the queue holds no run"
        return runs[-1]
    wake = office.last_wake()
    assert wake is not None and wake.run_id is not None, f"the wake names no run: {wake}"
    matches = [run for run in runs if run.run_id == wake.run_id]
    assert matches, f"the wake names run {wake.run_id!r}, which is not in the queue"
    return matches[0]


def payload_of(run: Run) -> dict[str, Any]:
    payload = parse_payload(run.payload)
    assert payload is not None, (
        f"run {run.run_id} stores a payload that is not a JSON object: {run.payload!r}"
    )
    return payload


def check_payload_field(payload: dict[str, Any], name: str, expected: str) -> None:
    if expected == ABSENT:
        assert name not in payload, f"expected no {name!r} in the payload, found {payload}"
    else:
        want = expected_json(expected)
        assert name in payload and payload[name] == want and type(payload[name]) is type(want), (
            f"expected {name!r} to be {want!r}, the payload is {payload}"
        )


_WHICH_RUN = r"(?P<which>the wake's run|the newest run)"


@then(parsers.re(rf'the payload of {_WHICH_RUN} has "(?P<name>[^"]+)": (?P<expected>.+)'))
def payload_has(office: OfficeScene, which: str, name: str, expected: str) -> None:
    check_payload_field(payload_of(chosen_run(office, which)), name, expected)


@then(parsers.re(rf'the payload of {_WHICH_RUN} has no "(?P<name>[^"]+)"'))
def payload_lacks(office: OfficeScene, which: str, name: str) -> None:
    check_payload_field(payload_of(chosen_run(office, which)), name, ABSENT)


@then(parsers.re(rf"the payload of {_WHICH_RUN} includes:"))
def payload_includes(office: OfficeScene, which: str, datatable: list[list[str]]) -> None:
    payload = payload_of(chosen_run(office, which))
    for name, expected in datatable[1:]:
        check_payload_field(payload, name, expected)


# --------------------------------------------------------------------------
# The mutation and its effects
# --------------------------------------------------------------------------


@then(
    parsers.re(
        r'task "(?P<task_id>[^"]+)" is assigned to (?P<assignee>"[^"]*"|nobody) '
        r"at generation (?P<generation>\d+)"
    )
)
def task_assigned_at_generation(
    office: OfficeScene, task_id: str, assignee: str, generation: str
) -> None:
    view = office.driver.get_task(task_id)
    expected = "" if assignee == "nobody" else assignee.strip('"')
    assert (view.assignee_agent_id, view.assignment_generation) == (expected, int(generation)), (
        f"expected assignee {expected!r} at generation {generation}, observed {view}"
    )


def effects_of_last_mutation(office: OfficeScene) -> tuple[MutationEffects, MutationEffects]:
    before = office.effects_before_last_mutation
    assert before is not None, "no assignee mutation has run yet"
    return before, office.driver.mutation_effects()


@then(parsers.parse('that assignment interrupted the session of "{agent_id}" on task "{task_id}"'))
def interrupted_session(office: OfficeScene, agent_id: str, task_id: str) -> None:
    before, after = effects_of_last_mutation(office)
    new = after.interrupts[len(before.interrupts) :]
    assert new == [SessionInterrupt(agent_id=agent_id, task_id=task_id)], (
        f"expected exactly one interrupt of {agent_id!r} on {task_id!r}, the mutation made {new}"
    )


@then(parsers.parse('the office session of "{agent_id}" on task "{task_id}" is "{state}"'))
def office_session_state(office: OfficeScene, agent_id: str, task_id: str, state: str) -> None:
    sessions = office.driver.mutation_effects().office_sessions
    mine = [s.state for s in sessions if (s.agent_id, s.task_id) == (agent_id, task_id)]
    assert mine and all(observed == state for observed in mine), (
        f"expected the office session rows of {agent_id!r} on {task_id!r} to be {state!r}, "
        f"observed {mine}; all rows: {sessions}"
    )


@then(
    parsers.parse(
        'that assignment published a "{event_type}" event for task "{task_id}" naming "{name}"'
    )
)
def published_event(office: OfficeScene, event_type: str, task_id: str, name: str) -> None:
    before, after = effects_of_last_mutation(office)
    new: list[PublishedEvent] = after.events[len(before.events) :]
    matching = [
        e for e in new if (e.event_type, e.task_id) == (event_type, task_id) and name in e.fields
    ]
    assert len(matching) == 1, (
        f"expected one {event_type!r} event for {task_id!r} naming {name!r}, "
        f"the mutation published {new}"
    )


# --------------------------------------------------------------------------
# Producers and constants
# --------------------------------------------------------------------------


@then(parsers.parse("the implementation reports exactly these producers of task_assigned wakes:"))
def reports_producers(office: OfficeScene, datatable: list[list[str]]) -> None:
    expected = sorted(row[0] for row in datatable[1:])
    reported = sorted(producer.value for producer in office.constants().producers)
    assert reported == expected, (
        f"expected the producers {expected}, the implementation reports {reported}"
    )


@then("the producers' wakes carry these actor types:")
def producers_actor_types(office: OfficeScene, datatable: list[list[str]]) -> None:
    expected = {Producer(row[0]): row[1] for row in datatable[1:]}
    assert set(office.producer_wakes) == set(expected), (
        f"the table names {sorted(expected)}, "
        f"the producers that emitted are {sorted(office.producer_wakes)}"
    )
    runs = {run.run_id: run for run in office.driver.list_runs()}
    for producer, actor_type in expected.items():
        wake = office.producer_wakes[producer]
        assert wake is not None and wake.outcome is Outcome.QUEUED and wake.run_id in runs, (
            f"{producer.value} must insert a run of its own on a fresh task, observed {wake}"
        )
        payload = payload_of(runs[wake.run_id])
        assert isinstance(payload.get("task_id"), str) and isinstance(
            payload.get("workspace_id"), str
        ), f"{producer.value}'s payload must name its task and workspace: {payload}"
        try:
            check_payload_field(payload, "actor_type", actor_type)
        except AssertionError as error:
            raise AssertionError(f"{producer.value}: {error}") from None


@then(
    parsers.re(
        rf"the implementation reports an allowance of (?P<allowance>\d+) wakes per {_DURATION}"
    )
)
def reports_allowance(office: OfficeScene, allowance: str, duration: str) -> None:
    constants = office.constants()
    window = parse_duration(duration).total_seconds()
    assert constants.allowance >= 1, f"an allowance below 1 refuses every agent wake: {constants}"
    assert (constants.allowance, constants.window_seconds) == (int(allowance), window), (
        f"expected an allowance of {allowance} per {window:g} s, the implementation reports "
        f"{constants.allowance} per {constants.window_seconds:g} s"
    )


# --------------------------------------------------------------------------
# Telemetry
# --------------------------------------------------------------------------


def parse_moves(text: str) -> dict[tuple[tuple[str, str], ...], float]:
    if text == "none":
        return {}
    moves = {(("reason", reason),): float(amount) for reason, amount in _MOVE.findall(text)}
    leftover = re.sub(r",|\band\b", "", _MOVE.sub("", text)).strip()
    assert moves and not leftover, (
        f"the feature's counter moves {text!r} are neither 'none' nor 'reason +n, ... and ...'"
    )
    for labels in moves:
        RateLimitReason(labels[0][1])
    return moves


def check_rate_limit_moves(
    office: OfficeScene, expected: dict[tuple[tuple[str, str], ...], float]
) -> None:
    after = read_counters(office.driver.telemetry())
    moved = counter_deltas(office.counters_noted, after, RATE_LIMIT_SAMPLE)
    assert moved == expected, (
        f"expected the rate-limit counter to move by {expected or 'nothing'}, "
        f"observed {moved or 'nothing'}"
    )


@then(parsers.parse("the rate-limit counters have moved since noted by: {moves}"))
def rate_limit_moves(office: OfficeScene, moves: str) -> None:
    check_rate_limit_moves(office, parse_moves(moves))


@then("no rate-limit counter has moved since noted")
def no_rate_limit_move(office: OfficeScene) -> None:
    check_rate_limit_moves(office, {})


@then(
    parsers.re(
        r"that reading shows (?P<sample>\w+)\{(?P<labels>[^}]*)\} up by (?P<delta>\d+) since noted"
    )
)
def reading_shows_counter(office: OfficeScene, sample: str, labels: str, delta: str) -> None:
    assert office.reading is not None, "the telemetry surface has not been read"
    key = (sample, parse_labels(labels))
    observed = read_counters(office.reading).get(key, 0.0) - office.counters_noted.get(key, 0.0)
    assert observed == float(delta), (
        f"expected {sample}{{{labels}}} to rise by {delta} in that one reading, "
        f"it rose by {observed:g}"
    )


@then(
    parsers.parse(
        "every sample of the rate-limit counter is labelled by reason alone, with one of: {reasons}"
    )
)
def rate_limit_labels_closed(office: OfficeScene, reasons: str) -> None:
    allowed = set(quoted_names(reasons))
    assert allowed == {reason.value for reason in RateLimitReason}, (
        f"the feature lists {sorted(allowed)}, "
        f"the port's closed set is {[r.value for r in RateLimitReason]}"
    )
    samples = [
        labels
        for name, labels in read_counters(office.driver.telemetry())
        if name == RATE_LIMIT_SAMPLE
    ]
    assert samples, f"the telemetry holds no {RATE_LIMIT_SAMPLE} sample at all"
    stray = [
        labels
        for labels in samples
        if len(labels) != 1 or labels[0][0] != "reason" or labels[0][1] not in allowed
    ]
    assert not stray, f"{RATE_LIMIT_SAMPLE} samples outside the closed label set: {stray}"


@then(
    parsers.parse(
        'the rate-limit counter holds a single sample for "{reason}", up by {delta:d} since noted'
    )
)
def single_sample_per_reason(office: OfficeScene, reason: str, delta: int) -> None:
    after = read_counters(office.driver.telemetry())
    carrying = {
        key: value
        for key, value in after.items()
        if key[0] == RATE_LIMIT_SAMPLE and ("reason", reason) in key[1]
    }
    assert len(carrying) == 1, (
        f"expected one {RATE_LIMIT_SAMPLE} sample for {reason!r}, found {carrying}"
    )
    ((key, value),) = carrying.items()
    rise = value - office.counters_noted.get(key, 0.0)
    assert rise == delta, f"expected {key} to rise by {delta}, it rose by {rise:g}"


@then("no telemetry label holds an identifier of a workspace, agent, task or run")
def no_identifier_labels(office: OfficeScene) -> None:
    identifiers = office.identifiers | {run.run_id for run in office.driver.list_runs()}
    labels = {pair for name, pairs in read_counters(office.driver.telemetry()) for pair in pairs}
    leaks = sorted(
        (label, value) for label, value in labels for ident in identifiers if ident in value
    )
    assert not leaks, (
        f"telemetry labels carry identifiers {leaks}; identifiers in play: {sorted(identifiers)}"
    )


# --------------------------------------------------------------------------
# Warning logs
# --------------------------------------------------------------------------


@then("no warning has been logged since noted")
def no_warning(office: OfficeScene) -> None:
    logged = office.warnings_since_noted()
    assert not logged, f"expected no warning, observed {logged}"


@then(
    parsers.re(
        r"(?P<count>one|\d+) warnings? ha(?:s|ve) been logged since noted, "
        r"(?:each )?with these fields:"
    )
)
def warnings_with_fields(office: OfficeScene, count: str, datatable: list[list[str]]) -> None:
    expected_count = 1 if count == "one" else int(count)
    logged = office.warnings_since_noted()
    assert len(logged) == expected_count, f"expected {expected_count} warnings, observed {logged}"
    expected = {name: value for name, value in datatable[1:]}
    for warning in logged:
        observed = {name: str(warning.fields.get(name, ABSENT)) for name in expected}
        assert observed == expected, (
            f"expected warning fields {expected}, observed {warning.fields} ({warning.message!r})"
        )
    office.checked_warnings = logged


@then(parsers.re(r'(?:that warning has|those warnings have) no "(?P<name>[^"]+)" field'))
def warnings_lack_field(office: OfficeScene, name: str) -> None:
    assert office.checked_warnings, "no warning has been checked yet"
    carrying = [w.fields for w in office.checked_warnings if name in w.fields]
    assert not carrying, f"expected no {name!r} field, observed {carrying}"


@then(parsers.re(r'(?:that warning has|those warnings have) a non-empty "(?P<name>[^"]+)" field'))
def warnings_carry_field(office: OfficeScene, name: str) -> None:
    assert office.checked_warnings, "no warning has been checked yet"
    lacking = [
        w.fields for w in office.checked_warnings if not str(w.fields.get(name) or "").strip()
    ]
    assert not lacking, f"expected a non-empty {name!r} field, observed {lacking}"
