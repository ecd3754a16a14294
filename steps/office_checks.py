"""Office Then steps about wakes, the run queue, the mutation and the reported constants.

Each check cites the clause it enforces; for an outcome, the clause depends on
the wake's shape (see `steps.office_scene`), so that a failure names the words
of the spec the implementation broke.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pytest_bdd import parsers, then

from conformance.driver import Outcome, Producer
from conformance.oracle.office_shapes import (
    ADMITTED_CLAUSES,
    AGENT,
    REFUSAL_MISREPORTED,
    Shape,
    counts_as_agent_run,
    parse_payload,
)
from conformance.oracle.stored_runs import (
    DELETION_KEPT_STEP,
    KEPT_STEP,
    RESTART_KEPT_STEP,
    expect_all_kept,
    expect_kept,
)
from conformance.spec.clause_check import (
    expect,
    port_requires,
    scenario_requires,
    scenario_value,
    violated,
)
from conformance.steps.common import _DURATION, parse_duration
from conformance.steps.office_scene import (
    COUNT,
    OfficeScene,
    Wake,
    describe_runs,
    outcome_cites,
)

NAMED_PRODUCERS = {producer.value for producer in Producer}


def check_outcome(wake: Wake, expected: list[str], label: str) -> None:
    """`wake` ended as one of `expected`, or the clause that demanded it is named."""
    expect(
        wake.outcome in expected,
        outcome_cites(wake, expected),
        f"expected {label} ({wake.shape.value}) to be {' or '.join(map(repr, expected))}, "
        f"observed {wake.outcome!r}",
    )


def either(first: str, second: str | None) -> list[str]:
    return [first] if second is None else [first, second]


# --------------------------------------------------------------------------
# Outcomes
# --------------------------------------------------------------------------

_EXPECTED = r'"(?P<first>[a-z_ ]+)"(?: or "(?P<second>[a-z_ ]+)")?'


@then(parsers.re(rf"the wake's outcome is {_EXPECTED}"))
def wake_outcome(office: OfficeScene, first: str, second: str | None) -> None:
    check_outcome(office.last_wake(), either(first, second), "the wake")


@then("the bare NaN was read one way at the gate and in the count")
def bare_nan_read_one_way(office: OfficeScene) -> None:
    """Over the scenario's wakes: one with a bare NaN, as many agent wakes of its task as the
    allowance, then another with a bare NaN. Out of scope (OF-9 as the kit reads it), every one
    is admitted, which the clauses on out-of-scope wakes require. Read as an agent wake of its
    task (`nan-read`), the first one counts, so the last agent wake and the second NaN wake are
    refused: a divergence on OF-9 alone, whose clauses then were never exercised. Any other
    history fits neither reading: the gate and the count read the NaN apart, and the clauses
    the kit's reading finds broken are named."""
    allowance = office.constants.allowance
    shapes = [wake.shape for wake in office.history]
    expected = [Shape.UNPARSEABLE, *[Shape.AGENT] * allowance, Shape.UNPARSEABLE]
    scenario_requires(shapes == expected, f"the scenario's wakes are {shapes}, not {expected}")
    outcomes = [wake.outcome for wake in office.history]
    out_of_scope = [Outcome.QUEUED.value] * (allowance + 2)
    read_as_agent = out_of_scope[:allowance] + [Outcome.RATE_LIMITED.value] * 2
    said = (
        f"outcomes in order {outcomes}; out of scope they are {out_of_scope}, read as an agent "
        f"wake of its task {read_as_agent}"
    )
    if outcomes == read_as_agent:
        raise violated("OF-9", f"read as an agent wake: {said}", observed="counted")
    expect(
        outcomes == out_of_scope,
        out_of_scope_breaks(outcomes),
        f"the gate and the count read the NaN apart, as neither reading of OF-9 does: {said}",
    )


def out_of_scope_breaks(outcomes: list[str]) -> tuple[str, ...]:
    """The clauses on out-of-scope wakes that these outcomes break (both, where none does: a
    check that holds verifies both)."""
    queued = Outcome.QUEUED.value
    nan_turned_away = {outcomes[0], outcomes[-1]} != {queued}
    agent_turned_away = set(outcomes[1:-1]) != {queued}
    admitted = ADMITTED_CLAUSES[Shape.UNPARSEABLE]
    broken = (
        admitted * nan_turned_away
        + ("AC-OFFICE-ASSIGN-RATE-001.1/others-consume-nothing",) * agent_turned_away
    )
    return broken or (*admitted, "AC-OFFICE-ASSIGN-RATE-001.1/others-consume-nothing")


@then(
    parsers.re(
        rf"the wake was admitted exactly if fewer than (?P<n>{COUNT}) agent runs of task "
        r'"(?P<task_id>[^"]+)" lay in its window'
    )
)
def admitted_exactly_below_allowance(office: OfficeScene, n: str, task_id: str) -> None:
    """After a crash, the allowance must agree with the runs stored: nothing else decides."""
    judged_by_stored_instants(office, office.count(n), task_id, "AC-OFFICE-ASSIGN-RATE-002.4/crash")


@then(
    parsers.re(
        r"the wake's outcome is what the instants stored for task \"(?P<task_id>[^\"]+)\" make "
        rf"it, with an allowance of (?P<n>{COUNT})"
    )
)
def outcome_by_stored_instants(office: OfficeScene, n: str, task_id: str) -> None:
    """The window is judged over the instants the implementation persisted, not those the
    harness sent: a store that keeps whole seconds (the protocol allows 0 to 6 fractional
    digits) moves a boundary, and the half-open window must hold over what it kept."""
    judged_by_stored_instants(
        office, office.count(n), task_id, "AC-OFFICE-ASSIGN-RATE-001.11/half-open"
    )


def judged_by_stored_instants(office: OfficeScene, n: int, task_id: str, cite: str) -> None:
    """The last wake was admitted exactly when fewer than `n` agent runs of the task lay in
    (now - W, now] by their stored instants."""
    wake = office.last_wake()
    before = office.baseline("by that wake")
    window = timedelta(seconds=office.constants.window_seconds)
    now = office.driver.advance_clock(timedelta(0))
    in_window = [
        run
        for run in before.runs
        if counts_as_agent_run(run, task_id) and now - window < run.requested_at <= now
    ]
    expected = "queued" if len(in_window) < n else "rate_limited"
    misreported = expected == "rate_limited" and wake.outcome in REFUSAL_MISREPORTED
    expect(
        wake.outcome == expected,
        REFUSAL_MISREPORTED[wake.outcome] if misreported else cite,
        f"by their stored instants, {len(in_window)} agent runs of {task_id!r} lay in the "
        f"window, so the wake was to be {expected!r}; observed {wake.outcome!r}\n"
        f"{describe_runs(before.runs)}",
    )


@then(parsers.re(rf"each of those wakes was {_EXPECTED}"))
def each_wake(office: OfficeScene, first: str, second: str | None) -> None:
    scenario_requires(bool(office.wakes), "no series of wakes has been made")
    for number, wake in enumerate(office.wakes, start=1):
        check_outcome(wake, either(first, second), f"wake {number} of the series")


@then(
    parsers.re(
        rf"wakes? (?P<first_index>{COUNT})(?: to (?P<last_index>{COUNT}))? of that series "
        rf"(?:was|were) "
        rf"{_EXPECTED}"
    )
)
def series_slice(
    office: OfficeScene, first_index: str, last_index: str | None, first: str, second: str | None
) -> None:
    start, end = office.count(first_index), office.count(last_index or first_index)
    scenario_requires(
        1 <= start <= end <= len(office.wakes),
        f"the series has {len(office.wakes)} wakes; the step asks for {start} to {end}",
    )
    for number in range(start, end + 1):
        check_outcome(office.wakes[number - 1], either(first, second), f"wake {number}")


@then(parsers.parse("the wakes of that series were, in order: {outcomes}"))
def series_in_order(office: OfficeScene, outcomes: str) -> None:
    expected = [item.strip() for item in outcomes.split(",")]
    scenario_requires(
        len(expected) == len(office.wakes),
        f"the step lists {len(expected)} outcomes for a series of {len(office.wakes)}",
    )
    for number, (wake, outcome) in enumerate(zip(office.wakes, expected, strict=True), start=1):
        check_outcome(wake, [outcome], f"wake {number}")


@then('each producer\'s wake was "queued"')
def each_producer_queued(office: OfficeScene) -> None:
    for producer, wake in office.producer_wakes.items():
        check_outcome(wake, ["queued"], f"the wake of {producer}")


@then("the assignment produced no wake")
def no_wake(office: OfficeScene) -> None:
    wake = office.last_wake()
    expect(
        wake.result is None,
        "AC-OFFICE-ASSIGN-RATE-001.9/no-wake",
        f"expected the unassignment to produce no wake, it answered {wake.result}",
    )


# --------------------------------------------------------------------------
# The run queue
# --------------------------------------------------------------------------

REFUSED_LEAVES_QUEUE = (
    "AC-OFFICE-ASSIGN-RATE-001.6/no-row",
    "AC-OFFICE-ASSIGN-RATE-001.6/no-merge",
)


@then("the wake names no run")
def wake_names_no_run(office: OfficeScene) -> None:
    wake = office.last_wake()
    expect(
        wake.result is not None and wake.result.run_id is None,
        REFUSED_LEAVES_QUEUE,
        f"a refused wake names no run (none was written or merged into), observed {wake.result}",
    )


@then(parsers.re("the run queue is exactly as it was before (?:that wake|those wakes)"))
def queue_unchanged(office: OfficeScene) -> None:
    before = office.baseline("by that wake").runs
    after = office.driver.list_runs()
    cites = (
        ("AC-OFFICE-ASSIGN-RATE-001.9/no-wake",)
        if office.last_wake().shape is Shape.UNASSIGNMENT
        else REFUSED_LEAVES_QUEUE
    )
    expect(
        after == before,
        cites,
        f"expected the queue untouched; before:\n{describe_runs(before)}\n"
        f"after:\n{describe_runs(after)}",
    )


@then(parsers.re(KEPT_STEP.format(that="(?:that wake|those wakes)", it="(?:it|they)")))
def stored_runs_kept(office: OfficeScene) -> None:
    """Only a merge may rewrite a stored run's payload; its instant and key stay."""
    before = office.baseline("by that wake").runs
    merged = {
        wake.result.run_id
        for wake in office.wakes
        if wake.result is not None and wake.result.outcome is Outcome.COALESCED
    }
    expect_kept(before, office.driver.list_runs(), {m for m in merged if m})


@then(RESTART_KEPT_STEP)
def stored_runs_kept_across_restart(office: OfficeScene) -> None:
    before = scenario_value(
        office.runs_before_restart,
        "no restart found the implementation running to read its runs before",
    )
    expect_all_kept(before, office.driver.list_runs(), "restart", window_opened(office))


@then(DELETION_KEPT_STEP)
def stored_runs_kept_across_deletion(office: OfficeScene) -> None:
    runs, deleted = scenario_value(office.runs_before_deletion, "no run has been deleted")
    kept = [run for run in runs if run.run_id != deleted]
    expect_all_kept(kept, office.driver.list_runs(), "deletion", window_opened(office))


def window_opened(office: OfficeScene) -> datetime:
    """When the window that ends now opened: a run requested before it counts for nothing."""
    now = office.driver.advance_clock(timedelta(0))
    return now - timedelta(seconds=office.constants.window_seconds)


@then(
    parsers.re(
        rf"no rolling window of {_DURATION} holds more than (?P<allowance>{COUNT}) agent wakes "
        r'for task "(?P<task_id>[^"]+)"'
    )
)
def no_window_over_allowance(
    office: OfficeScene, duration: str, allowance: str, task_id: str
) -> None:
    """The fullest windows are those ending at a stored agent wake, so only those are checked."""
    window = parse_duration(duration)
    runs = office.driver.list_runs()
    instants = [run.requested_at for run in runs if counts_as_agent_run(run, task_id)]
    fullest = max(
        (sum(1 for other in instants if end - window < other <= end) for end in instants), default=0
    )
    expect(
        fullest <= office.count(allowance),
        "AC-OFFICE-ASSIGN-RATE-001.2/serial-bound",
        f"a rolling window of {duration} holds {fullest} agent wakes for {task_id!r}:\n"
        f"{describe_runs(runs)}",
    )


@then("every run in the queue has no dedup key")
def runs_keyless(office: OfficeScene) -> None:
    runs = office.driver.list_runs()
    port_requires(
        bool(runs) and all(run.dedup_key is None for run in runs),
        "hook:keyless_assignment promises wakes without a dedup key; the queue holds:\n"
        + describe_runs(runs),
    )


@then(parsers.re(r"the (?P<count>\d+) newest runs share one request instant"))
def newest_runs_share_instant(office: OfficeScene, count: str) -> None:
    runs = office.driver.list_runs()[-int(count) :]
    port_requires(
        len(runs) == int(count) and len({run.requested_at for run in runs}) == 1,
        "wakes made at one instant of the harness's clock must be stored at that instant "
        f"(the harness owns the clock):\n{describe_runs(runs)}",
    )


@then(
    parsers.re(
        r"the runs acknowledged before the crash are all still stored, "
        r"and no dedup key is stored twice"
    )
)
def nothing_lost_or_doubled(office: OfficeScene) -> None:
    acknowledged = {run.run_id: run for run in office.baseline("by that wake").runs}
    stored = office.driver.list_runs()
    lost = sorted(set(acknowledged) - {run.run_id for run in stored})
    keys = [run.dedup_key for run in stored if run.dedup_key is not None]
    doubled = sorted({key for key in keys if keys.count(key) > 1})
    expect(
        not lost,
        "OF-7",
        f"after the crash, runs acknowledged before it are gone: {lost}\n{describe_runs(stored)}",
        observed="lost",
    )
    expect(
        not doubled,
        "AC-OFFICE-ASSIGN-RATE-002.5/keyed-once",
        f"after the crash, dedup keys are stored twice, so one wake takes two places: {doubled}"
        f"\n{describe_runs(stored)}",
    )


# --------------------------------------------------------------------------
# Payloads
# --------------------------------------------------------------------------


def wakes_run_payload(office: OfficeScene, wake: Wake) -> dict[str, object]:
    result = scenario_value(wake.result, "the wake made no run to look at")
    runs = {run.run_id: run for run in office.driver.list_runs()}
    run = runs.get(result.run_id or "")
    port_requires(
        run is not None, f"the wake names run {result.run_id!r}, which is not in the queue"
    )
    payload = parse_payload(run.payload) if run is not None else None
    return scenario_value(payload, f"the wake's run stores no JSON object: {run}")


@then("the payload of the wake's run says actor type agent")
def payload_says_agent(office: OfficeScene) -> None:
    payload = wakes_run_payload(office, office.last_wake())
    expect(
        payload.get("actor_type") == AGENT,
        "AC-OFFICE-ASSIGN-RATE-001.13/mutation-stamps-agent",
        f"an agent's assignment wake says actor type 'agent', the payload is {payload}",
    )


@then("the payload of the wake's run does not say actor type agent")
def payload_not_agent(office: OfficeScene) -> None:
    wake = office.last_wake()
    payload = wakes_run_payload(office, wake)
    cite = (
        "AC-OFFICE-ASSIGN-RATE-001.12/no-other-producer"
        if wake.shape is Shape.PRODUCER
        else "AC-OFFICE-ASSIGN-RATE-001.1/internal-caller-is-user"
    )
    expect(
        payload.get("actor_type") != AGENT,
        cite,
        f"{wake.shape.value} must not say actor type 'agent', the payload is {payload}",
    )


# --------------------------------------------------------------------------
# The mutation and its effects
# --------------------------------------------------------------------------


@then(
    parsers.re(
        r'task "(?P<task_id>[^"]+)" is assigned to "(?P<assignee>[^"]+)"'
        r"(?P<newer>, at a newer generation than before that assignment)?"
    )
)
def task_assigned_to(office: OfficeScene, task_id: str, assignee: str, newer: str | None) -> None:
    view = office.driver.get_task(task_id)
    expect(
        view.assignee_agent_id == assignee,
        "AC-OFFICE-ASSIGN-RATE-001.7/mutation-kept",
        f"expected {task_id!r} assigned to {assignee!r}, observed {view}",
    )
    if newer:
        before = office.generation_before_action.get(task_id, 0)
        expect(
            view.assignment_generation > before,
            "AC-OFFICE-ASSIGN-RATE-001.7/mutation-kept",
            f"the refused assignment's generation stays bumped: before it {before}, "
            f"now {view.assignment_generation}",
        )


@then("every assignment of that series committed a newer generation than the one before")
def generations_rise(office: OfficeScene) -> None:
    committed = office.series_generations
    scenario_requires(bool(committed), "no series of assignments has been made")
    latest = dict(office.generation_before_action)
    for task_id, generation in committed:
        expect(
            generation > latest.get(task_id, -1),
            "AC-OFFICE-ASSIGN-RATE-001.7/mutation-kept",
            f"each assignment commits a newer generation, refused or not; {task_id!r} went from "
            f"{latest.get(task_id)} to {generation} (the series committed {committed})",
        )
        latest[task_id] = generation


@then(parsers.parse('that assignment interrupted the session of "{agent_id}" on task "{task_id}"'))
def interrupted_session(office: OfficeScene, agent_id: str, task_id: str) -> None:
    before = office.baseline("by that assignment").effects
    new = office.driver.mutation_effects().interrupts[len(before.interrupts) :]
    expect(
        any((i.agent_id, i.task_id) == (agent_id, task_id) for i in new),
        "AC-OFFICE-ASSIGN-RATE-001.7/interrupt",
        f"expected the session of {agent_id!r} on {task_id!r} interrupted, the mutation "
        f"interrupted {new}",
    )


@then(
    parsers.parse(
        "that assignment changed the state of the office session of "
        '"{agent_id}" on task "{task_id}"'
    )
)
def office_session_moved(office: OfficeScene, agent_id: str, task_id: str) -> None:
    """The row changes state; to the declared state when the implementation declares one."""
    before = office.baseline("by that assignment").effects.office_sessions
    after = office.driver.mutation_effects().office_sessions
    mine_before = [s.state for s in before if (s.agent_id, s.task_id) == (agent_id, task_id)]
    mine_after = [s.state for s in after if (s.agent_id, s.task_id) == (agent_id, task_id)]
    port_requires(
        bool(mine_before), f"{agent_id!r}'s office session on {task_id!r} was never reported"
    )
    declared = office.vocabulary.interrupted_session_state
    moved = bool(mine_after) and all(
        state != old and (declared is None or state == declared)
        for state, old in zip(mine_after, mine_before, strict=False)
    )
    expect(
        moved,
        "AC-OFFICE-ASSIGN-RATE-001.7/session-row",
        f"expected the office session rows of {agent_id!r} on {task_id!r} to move on from "
        f"{mine_before}{f' to {declared!r}' if declared else ''}, observed {mine_after}",
    )


@then(parsers.parse('that assignment published the task-updated event for task "{task_id}"'))
def published_task_updated(office: OfficeScene, task_id: str) -> None:
    before = office.baseline("by that assignment").effects
    new = office.driver.mutation_effects().events[len(before.events) :]
    event_type = office.vocabulary.task_updated_event
    expect(
        any((e.event_type, e.task_id) == (event_type, task_id) for e in new),
        "AC-OFFICE-ASSIGN-RATE-001.7/task-updated",
        f"expected a {event_type!r} event for {task_id!r} (the declared task-updated event), "
        f"the mutation published {new}",
    )


# --------------------------------------------------------------------------
# Producers and constants
# --------------------------------------------------------------------------


@then(
    "the implementation reports the five producers the spec names among its producers "
    "of task_assigned wakes"
)
def reports_named_producers(office: OfficeScene) -> None:
    missing = sorted(NAMED_PRODUCERS - set(office.constants.producers))
    expect(
        not missing,
        "OF-6",
        f"the producers {missing} are not among those reported: {office.constants.producers}",
        observed="fewer-producers",
    )


@then("only the assignee mutation's wake says actor type agent")
def only_mutation_says_agent(office: OfficeScene) -> None:
    scenario_requires(bool(office.producer_wakes), "no producer has emitted a wake")
    for producer, wake in office.producer_wakes.items():
        says_agent = wakes_run_payload(office, wake).get("actor_type") == AGENT
        if producer == Producer.ASSIGNEE_MUTATION:
            expect(
                says_agent,
                "AC-OFFICE-ASSIGN-RATE-001.13/mutation-stamps-agent",
                "the assignee mutation acting as an agent says actor type 'agent' on its wake",
            )
        else:
            expect(
                not says_agent,
                "AC-OFFICE-ASSIGN-RATE-001.12/no-other-producer",
                f"producer {producer!r} says actor type 'agent' on its wake",
            )


@then(
    parsers.re(
        rf"the implementation reports an allowance of (?P<allowance>{COUNT}) wakes per {_DURATION}"
    )
)
def reports_allowance(office: OfficeScene, allowance: str, duration: str) -> None:
    constants = office.constants
    window = parse_duration(duration).total_seconds()
    expect(
        constants.allowance >= 1,
        "AC-OFFICE-ASSIGN-RATE-002.6/at-least-one",
        f"an allowance below 1 refuses every agent wake: {constants.allowance}",
    )
    expect(
        (constants.allowance, constants.window_seconds) == (office.count(allowance), window),
        "AC-OFFICE-ASSIGN-RATE-002.6/values",
        f"expected an allowance of {office.count(allowance)} per {window:g} s, the implementation "
        f"reports {constants.allowance} per {constants.window_seconds:g} s",
    )


@then(parsers.re(r'the generation of task "(?P<task_id>[^"]+)" is no lower than before the crash'))
def generation_kept(office: OfficeScene, task_id: str) -> None:
    before = office.generation_before_action.get(task_id, 0)
    view = office.driver.get_task(task_id)
    expect(
        view.assignment_generation >= before,
        "AC-OFFICE-ASSIGN-RATE-001.7/mutation-kept",
        f"before the crash {task_id!r} was at generation {before}, after it at "
        f"{view.assignment_generation}",
    )
