"""The rolling-window properties' world: their schedules of serial wakes, how a wake is
performed and judged against the window oracle, and the closing check of the stored windows.

The tests are in `test_office_window.py`; a failing example is written as a scenario by
`office_scenario`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hypothesis import note
from hypothesis import strategies as st

from conformance.driver import Driver, OfficeConstants, Outcome, Run, RunStatus
from conformance.oracle.office_shapes import counts_as_agent_run
from conformance.oracle.office_window import OfficeWindowOracle
from conformance.properties.office_operations import MICRO, SETTLED
from conformance.spec.clause_check import expect, expect_value, port_value

WORKSPACE = "ws"
ASSIGNER = "assigner"
ASSIGNEES = ("a1", "a2")
TASKS = ("t1", "t2")
T0 = datetime(2026, 2, 2, 8, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Wake:
    """One assignment to perform, and the status its run takes once admitted."""

    task_id: str
    assignee: str
    by_agent: bool
    at: datetime
    settle_as: RunStatus
    restart_first: bool = False

    def __repr__(self) -> str:
        actor = "agent" if self.by_agent else "user"
        restart = "restart, then " if self.restart_first else ""
        return (
            f"<{restart}{self.task_id}->{self.assignee} by {actor} at T0+{self.at - T0}, "
            f"then {self.settle_as}>"
        )


@dataclass(frozen=True)
class Office:
    """The constants an implementation reports, and whether it can restart."""

    constants: OfficeConstants
    restartable: bool
    restarts_per_schedule: int | None = None
    """At most this many restarts in one schedule (None: no limit; see RESTARTS_PER_EXAMPLE)."""
    restart_permits: tuple[bool, ...] = (True,)
    """Whether a schedule may restart is drawn from these (see RESTARTING_EXAMPLES)."""

    @property
    def allowance(self) -> int:
        return self.constants.allowance

    @property
    def window(self) -> timedelta:
        return timedelta(seconds=self.constants.window_seconds)

    def oracle(self) -> OfficeWindowOracle:
        return OfficeWindowOracle.from_constants(self.constants)


@dataclass(frozen=True)
class Timing:
    """When a wake comes: `gap` after the previous one, or, when `echo` is set, one
    window plus `gap` after an earlier agent wake of its task still inside the
    window (never before the previous wake)."""

    gap: timedelta
    echo: int | None


BUSY_TASK = TASKS[0]
SHORT_GAPS = st.one_of(
    st.just(timedelta(0)), st.integers(1, 10_000_000).map(lambda micros: micros * MICRO)
)


def gaps(window: timedelta) -> st.SearchStrategy[timedelta]:
    """Mostly none or a few seconds, so windows fill; sometimes most of a window or its edge."""
    return st.one_of(
        SHORT_GAPS,
        SHORT_GAPS,
        st.integers(0, window // MICRO).map(lambda micros: micros * MICRO),
        st.sampled_from([window - MICRO, window, window + MICRO]),
    )


def timings(window: timedelta) -> st.SearchStrategy[Timing]:
    edge = st.sampled_from([-MICRO, timedelta(0), MICRO])
    after_previous = st.builds(Timing, gap=gaps(window), echo=st.none())
    return st.one_of(after_previous, st.builds(Timing, gap=edge, echo=st.integers(0, 9)))


@st.composite
def schedules(draw: st.DrawFn, office: Office, more: int) -> list[Wake]:
    """A serial sequence of wakes with non-decreasing request instants from T0.

    It opens with N agent wakes on the busy task a few seconds apart, so its
    window starts full, then up to `more` wakes of any kind, some after a
    restart when the implementation can restart and the schedule is one of those
    that may (see RESTARTING_EXAMPLES). An echoing wake comes one
    window, give or take a microsecond, after an earlier agent wake of its task:
    where a slot frees, or is one microsecond from freeing.
    """
    window = office.window
    permitted = st.sampled_from(office.restart_permits)
    restarting = office.restartable and draw(permitted, label="may restart")
    restarts = st.sampled_from([False] * 7 + [True]) if restarting else st.just(False)
    opening = [
        (Timing(gap, None), BUSY_TASK, assignee, True, settle_as, False)
        for gap, assignee, settle_as in draw(
            st.lists(
                st.tuples(SHORT_GAPS, st.sampled_from(ASSIGNEES), st.sampled_from(SETTLED)),
                min_size=office.allowance,
                max_size=office.allowance,
            )
        )
    ]
    rest = draw(
        st.lists(
            st.tuples(
                timings(window),
                st.sampled_from([BUSY_TASK, BUSY_TASK, BUSY_TASK, TASKS[1]]),
                st.sampled_from(ASSIGNEES),
                st.sampled_from([True, True, True, False]),
                st.sampled_from(SETTLED),
                restarts,
            ),
            max_size=more,
        )
    )
    wakes: list[Wake] = []
    now = T0
    restarts_left = office.restarts_per_schedule
    for timing, task_id, assignee, by_agent, settle_as, restart_first in opening + rest:
        now = resolve(timing, now, agent_wakes_of(wakes, task_id), window)
        restart = restart_first and restarts_left != 0
        if restart and restarts_left is not None:
            restarts_left -= 1
        wakes.append(Wake(task_id, assignee, by_agent, now, settle_as, restart))
    return wakes


def agent_wakes_of(wakes: Sequence[Wake], task_id: str) -> list[datetime]:
    return [wake.at for wake in wakes if wake.task_id == task_id and wake.by_agent]


def resolve(
    timing: Timing, now: datetime, earlier: Sequence[datetime], window: timedelta
) -> datetime:
    """The instant a timing designates, given the clock and the task's earlier agent wakes.

    An echo picks among the earlier wakes still inside the window, oldest first,
    since the oldest is the one whose slot frees next when the window is full.
    An echo with nothing to echo comes right after the previous wake: its gap,
    a microsecond either side of a window's end, may be negative, and the
    clock never goes back.
    """
    inside = [instant for instant in earlier if instant > now - window]
    if timing.echo is None or not inside:
        return max(now, now + timing.gap)
    return max(now, inside[timing.echo % len(inside)] + window + timing.gap)


def prepare(driver: Driver) -> None:
    """One workspace, an agent allowed to assign, two assignees and two unassigned tasks."""
    driver.create_workspace(WORKSPACE)
    driver.create_agent(WORKSPACE, ASSIGNER, can_assign_tasks=True)
    for assignee in ASSIGNEES:
        driver.create_agent(WORKSPACE, assignee, can_assign_tasks=False)
    for task_id in TASKS:
        driver.create_task(WORKSPACE, task_id)


@dataclass(frozen=True)
class Performed:
    """How a wake ended, and the request instant its run was stored with, if it was queued."""

    outcome: Outcome
    stored_at: datetime | None = None


def perform(driver: Driver, wake: Wake) -> Outcome:
    """Assign at the wake's instant and settle its run if one was inserted."""
    return performed(driver, wake).outcome


def performed(driver: Driver, wake: Wake) -> Performed:
    """Assign at the wake's instant, settle its run if one was inserted, and read back the
    instant an admitted agent wake's run was stored with (the window is over those).

    Nothing but the gate can decide these wakes (no run stays queued, no key
    repeats), so a user wake is queued, and an agent wake is queued or told
    rate_limited: never left unreported, nor reported coalesced or deduplicated.
    """
    if wake.restart_first:
        driver.restart()
    driver.set_clock(wake.at)
    acting = ASSIGNER if wake.by_agent else ""
    result = driver.assign_task(wake.task_id, wake.assignee, acting_agent_id=acting)
    answered = expect_value(
        result.wake,
        "AC-OFFICE-ASSIGN-RATE-003.5/not-absence"
        if wake.by_agent
        else "AC-OFFICE-ASSIGN-RATE-001.1/others-admitted",
        f"{wake!r}: no wake",
    )
    outcome = answered.outcome
    note(f"{wake!r} -> {outcome.value}")
    if outcome is Outcome.COALESCED:
        check_merged(driver, wake, answered.run_id)
        return Performed(outcome)
    if wake.by_agent:
        expect(
            outcome in (Outcome.QUEUED, Outcome.RATE_LIMITED),
            (
                "AC-OFFICE-ASSIGN-RATE-003.5/distinct-outcome",
                "AC-OFFICE-ASSIGN-RATE-001.6/not-reported-admitted",
            ),
            f"{wake!r} met nothing but the gate and a coalescer, yet came out {outcome.value}",
        )
    else:
        expect(
            outcome is Outcome.QUEUED,
            "AC-OFFICE-ASSIGN-RATE-001.1/others-admitted",
            f"{wake!r} came out {outcome.value}",
        )
    if outcome is not Outcome.QUEUED:
        return Performed(outcome)
    run_id = port_value(answered.run_id, f"{wake!r} was queued without naming its run")
    driver.set_run_status(run_id, wake.settle_as)
    if not wake.by_agent:
        return Performed(outcome)
    return Performed(outcome, stored_instant(driver, run_id, wake))


def check_merged(driver: Driver, wake: Wake, run_id: str | None) -> None:
    """A merge stands whatever run it chose (which runs absorb a wake is the coalescer's
    business, outside this spec), but it must be one: a stored run of the wake's assignee that
    has absorbed a wake, not a refusal reported as a merge (001.6)."""
    merged = next((run for run in driver.list_runs() if run.run_id == run_id), None)
    expect(
        merged is not None and merged.agent_id == wake.assignee and merged.coalesced_count > 0,
        "AC-OFFICE-ASSIGN-RATE-001.6/not-reported-admitted",
        f"{wake!r} was reported merged into {run_id!r}, which reads {merged!r}",
    )


def stored_instant(driver: Driver, run_id: str, wake: Wake) -> datetime:
    stored = next((run for run in driver.list_runs() if run.run_id == run_id), None)
    return port_value(stored, f"{wake!r} was queued as {run_id}, which is not stored").requested_at


def predicted(oracle: OfficeWindowOracle, wake: Wake) -> Outcome:
    """User wakes are outside the gate; agent wakes are the oracle's to decide (the caller
    records an admitted one at its stored instant)."""
    admitted = oracle.admits(wake.task_id, wake.at) if wake.by_agent else True
    return Outcome.QUEUED if admitted else Outcome.RATE_LIMITED


def judged(oracle: OfficeWindowOracle, wake: Wake, happened: Performed, driver: Driver) -> None:
    """Remember an admitted agent wake where the implementation stored it; after a merge,
    which may have moved a run into or out of the count, take the count from the store."""
    if happened.outcome is Outcome.COALESCED:
        oracle.resync(wake.task_id, agent_wake_instants(driver.list_runs(), wake.task_id))
    elif wake.by_agent and happened.stored_at is not None:
        oracle.record(wake.task_id, happened.stored_at)


def decision_cites(oracle: OfficeWindowOracle, wake: Wake) -> tuple[str, ...]:
    """The clauses an agent wake's decision rests on, read before the oracle decides it.

    Admissible: a refusal breaks never-refuse-early; when an admitted wake is
    exactly W old, its no longer counting is exactly-w-old; when any has left
    the window, its place coming back is frees-after-window. Not admissible: an
    admission breaks serial-bound; when the oldest wake in the window is a
    microsecond from leaving it, it still counting is half-open.
    """
    earlier = oracle.admitted(wake.task_id)
    start = wake.at - oracle.window
    if oracle.admits(wake.task_id, wake.at):
        edge = (
            ("AC-OFFICE-ASSIGN-RATE-001.11/exactly-w-old", "AC-OFFICE-ASSIGN-RATE-001.11/half-open")
            if start in earlier
            else ()
        )
        freed = (
            ("AC-OFFICE-ASSIGN-RATE-001.4/frees-after-window",)
            if any(i <= start for i in earlier)
            else ()
        )
        return ("AC-OFFICE-ASSIGN-RATE-002.1/never-refuse-early", *edge, *freed)
    return (
        ("AC-OFFICE-ASSIGN-RATE-001.2/serial-bound", "AC-OFFICE-ASSIGN-RATE-001.11/half-open")
        if start + MICRO in earlier
        else ("AC-OFFICE-ASSIGN-RATE-001.2/serial-bound",)
    )


def agent_wake_instants(runs: Sequence[Run], task_id: str) -> list[datetime]:
    """Request instants of stored runs that count toward `task_id`'s allowance, read from the
    stored payloads the way the spec reads them, independently of any implementation code."""
    return [run.requested_at for run in runs if counts_as_agent_run(run, task_id)]


def held_in_window(instants: Sequence[datetime], end: datetime, window: timedelta) -> int:
    return sum(1 for instant in instants if end - window < instant <= end)


def admitted_per_task(outcomes: Sequence[tuple[Wake, Outcome]]) -> Counter[tuple[str, bool]]:
    return Counter((w.task_id, w.by_agent) for w, outcome in outcomes if outcome is Outcome.QUEUED)


def admissions_predicted(
    oracle: OfficeWindowOracle, outcomes: Sequence[tuple[Wake, Outcome]]
) -> Counter[tuple[str, bool]]:
    """How many of a same-instant batch the window admits per task, after what was stored
    before it (the batch is stored at one instant, whatever its precision): of the wakes
    that reached the gate, since a merge upstream of it stands and is neither counted nor
    refused (001.5)."""
    admitted: Counter[tuple[str, bool]] = Counter()
    for wake, outcome in outcomes:
        if outcome is not Outcome.COALESCED and predicted(oracle, wake) is Outcome.QUEUED:
            admitted[(wake.task_id, wake.by_agent)] += 1
            if wake.by_agent:
                oracle.record(wake.task_id, wake.at)
    return admitted


def merged_tasks(outcomes: Sequence[tuple[Wake, Outcome]]) -> set[str]:
    """The tasks some wake of a batch merged into a run of. A merge may move the run it lands
    in into or out of the count (the relabel the spec tolerates), and which run it picks is the
    coalescer's, so the order's check leaves such a task unjudged."""
    return {wake.task_id for wake, outcome in outcomes if outcome is Outcome.COALESCED}


def unmerged(
    admissions: Counter[tuple[str, bool]], outcomes: Sequence[tuple[Wake, Outcome]]
) -> Counter[tuple[str, bool]]:
    """A batch's admissions of the tasks none of whose wakes merged (see `merged_tasks`)."""
    merged = merged_tasks(outcomes)
    return Counter({key: n for key, n in admissions.items() if key[0] not in merged})


def judged_tasks(outcomes: Sequence[tuple[Wake, Outcome]]) -> set[str]:
    """The tasks of a batch whose admissions the order's check judges."""
    return {wake.task_id for wake, _ in outcomes} - merged_tasks(outcomes)


def check_stored(
    instants: list[datetime], admitted: int, merged: int, task_id: str, office: Office
) -> None:
    """The stored agent runs are the admitted wakes, and no window of them holds more than N.

    A stored run no admission accounts for is a refused wake's row; an admitted
    wake with no stored run is one the count, made from the store, cannot see. Each merge
    may move one run into or out of the count (the relabel the spec tolerates).
    """
    expect(
        len(instants) <= admitted + merged,
        ("AC-OFFICE-ASSIGN-RATE-001.6/no-row", "AC-OFFICE-ASSIGN-RATE-001.4/relabel-tolerance")
        if merged
        else "AC-OFFICE-ASSIGN-RATE-001.6/no-row",
        f"{task_id}: {len(instants)} rows, {admitted} admitted, {merged} merged",
    )
    expect(
        len(instants) >= admitted - merged,
        ("AC-OFFICE-ASSIGN-RATE-002.4/stateless", "AC-OFFICE-ASSIGN-RATE-001.4/relabel-tolerance")
        if merged
        else "AC-OFFICE-ASSIGN-RATE-002.4/stateless",
        f"{task_id}: {len(instants)} rows, {admitted} admitted, {merged} merged",
    )
    window = office.window
    busiest = max((held_in_window(instants, end, window) for end in instants), default=0)
    expect(
        busiest <= office.allowance,
        ("AC-OFFICE-ASSIGN-RATE-001.2/serial-bound", "AC-OFFICE-ASSIGN-RATE-001.11/half-open"),
        f"a window of {task_id} holds {busiest} agent wakes",
    )
