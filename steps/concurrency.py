"""Race and crash steps: concurrent batches through `run_concurrently`, judged (the office's by
the history checker's bound, the work requests' by the linearizability search over the model),
and crashes the harness causes in the middle of one.

The race programs live in `conformance.concurrency.races`; their counts (the largest
over-admission observed, definite and indeterminate outcomes, how each call ended) go into the
scenario's result record as evidence, whether it passes or fails. A batch that leaves too many
outcomes unknown cannot show the implementation right or wrong: the scenario is then `errored`,
never passed.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import cast

import pytest
from pytest_bdd import given, parsers, then, when

from conformance.applicability import not_applicable, require
from conformance.concurrency.checker import CheckResult, over_admission_evidence
from conformance.concurrency.history import HistoryRecorder
from conformance.concurrency.process_pool import ProcessPool
from conformance.concurrency.races import (
    PUBLISHED_RESULTS,
    RaceVerdict,
    claim_race,
    delegation_race,
    full_window_rounds,
    office_wake_checks,
    one_place_rounds,
    outcome_key,
    publish_race,
)
from conformance.driver import (
    Capability,
    ConcurrentCall,
    Driver,
    DriverError,
    ErrorCode,
    LaunchesPeers,
)
from conformance.spec.clause_check import (
    Cite,
    expect,
    scenario_requires,
    scenario_value,
)
from conformance.steps.office_scene import OfficeScene, Wake

RACE_START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

CHECK_CLAUSES: dict[str, Cite] = {
    "allowance": (
        "AC-OFFICE-ASSIGN-RATE-002.1/never-refuse-early",
        "AC-OFFICE-ASSIGN-RATE-002.1/over-admission-bounded",
        "AC-OFFICE-ASSIGN-RATE-001.2/concurrent-may-exceed",
        "OF-5",
    ),
    "assignment_generations": "AC-OFFICE-ASSIGN-RATE-001.7/mutation-kept",
    "claims": ("AC-ARMONIA-WORKREQ-001.7/fenced", "AC-ARMONIA-WORKREQ-001.7/stale-rejected"),
    "publishes": (
        "AC-ARMONIA-WORKREQ-001.6/records-result",
        "AC-ARMONIA-WORKREQ-001.6/closes-once",
    ),
    "budget": "AC-ARMONIA-WORKREQ-001.9/no-budget-created",
}
"""The clauses each check enforces (for work requests: what the search is credited with)."""


@dataclass
class Race:
    """The scenario's recorded history: every race step of a scenario adds to the same one.
    With several processes on one store, `driver` is their pool."""

    driver: Driver
    evidence: list[str]
    verdict: RaceVerdict | None = None
    pool: ProcessPool | None = None
    _recorder: HistoryRecorder | None = field(default=None, repr=False)

    @property
    def recorder(self) -> HistoryRecorder:
        if self._recorder is None:
            self._recorder = HistoryRecorder(self.driver)
            self._recorder.set_clock(RACE_START)
        return self._recorder

    def judged(self, verdict: RaceVerdict) -> RaceVerdict:
        """Keep the verdict, put every check's counts into the evidence, refuse unknowns."""
        self.verdict = verdict
        self.evidence.extend(verdict.evidence())
        if self.pool is not None:
            self.evidence.append(
                f"{len(self.pool.processes)} processes on one store; "
                f"{self.pool.kills} killed in the middle of a call and replaced"
            )
            scenario_requires(
                self.pool.kills > 0 or not self.pool.killing,
                "a process was to be killed in each batch, but no batch was large enough",
            )
        decided(verdict)
        verdict.expect_definite()
        return verdict


@pytest.fixture
def race(driver: Driver, evidence: list[str]) -> Race:
    return Race(driver, evidence)


def expect_clean(check: CheckResult) -> None:
    expect(check.ok, CHECK_CLAUSES[check.check], f"the history checker found:\n{check}")


def decided(verdict: RaceVerdict) -> None:
    """A history no search could judge leaves the scenario not applicable, with the reason:
    its clauses stay unexercised by it, neither passed nor failed."""
    if verdict.undecided is not None:
        not_applicable(verdict.undecided)


def the_verdict(race: Race) -> RaceVerdict:
    return scenario_value(race.verdict, "no race was run in this scenario")


@given("the implementation evaluates operations concurrently")
def evaluates_concurrently(driver: Driver) -> None:
    require(driver, Capability.CONCURRENCY)


@given(parsers.parse("the implementation runs as {count:d} processes on one store"))
def several_processes(
    race: Race, driver: Driver, count: int, request: pytest.FixtureRequest
) -> None:
    """The scenario's process and `count - 1` more of the same command on its store; the
    race steps then deal their batches over them (see concurrency.process_pool)."""
    require(driver, Capability.MULTIPROCESS)
    if not isinstance(driver, LaunchesPeers):
        not_applicable(
            "the implementation runs inside the harness, which cannot "
            "start several processes of it (run it through exec:)"
        )
    pool = ProcessPool(driver, driver.launch_peer, count, RACE_START)
    request.addfinalizer(pool.close_peers)
    race.pool = pool
    race.driver = cast(Driver, pool)


@given("one process is killed in the middle of each batch, and a new one takes its place")
def killing_in_each_batch(race: Race) -> None:
    pool = scenario_value(race.pool, "no processes were started on one store")
    pool.killing = True


# --------------------------------------------------------------------------
# Office races
# --------------------------------------------------------------------------


@when(
    parsers.parse(
        "in each of {rounds:d} rounds, {concurrent:d} agent wakes at once meet a fresh task "
        "with one place left in its allowance"
    )
)
def wakes_at_one_place(race: Race, rounds: int, concurrent: int) -> None:
    one_place_rounds(race.recorder, rounds=rounds, concurrent=concurrent)


@when(
    parsers.parse(
        "in each of {rounds:d} rounds, {concurrent:d} agent wakes at once meet one task "
        "whose allowance is already used up"
    )
)
def wakes_at_full_window(race: Race, rounds: int, concurrent: int) -> None:
    full_window_rounds(race.recorder, rounds=rounds, concurrent=concurrent)


@then(
    parsers.parse(
        "no wake was refused before the allowance was reached, and no window admitted more "
        "than {bound:d} beyond it"
    )
)
def allowance_held_under_race(race: Race, bound: int) -> None:
    """Judged only on batches that left enough definite outcomes to judge: `Race.judged` stops
    the scenario as a breach of the port when fewer than MINIMUM_DEFINITE_SHARE of a batch's
    outcomes are definite, so a pass never rests on calls whose answers were lost."""
    verdict = race.judged(office_wake_checks(race.recorder))
    allowance = verdict.check("allowance")
    race.evidence.append(over_admission_evidence(allowance))
    expect_clean(allowance)
    expect_clean(verdict.check("assignment_generations"))
    largest = allowance.counts.get("largest_over_admission", 0)
    expect(
        largest <= bound,
        CHECK_CLAUSES["allowance"],
        f"over-admission of {largest} beyond the allowance, bound {bound}",
    )


# --------------------------------------------------------------------------
# Work-request races
# --------------------------------------------------------------------------


@when(
    parsers.parse("{claimants:d} members claim one open request at once, for {requests:d} requests")
)
def claims_race(race: Race, claimants: int, requests: int) -> None:
    race.judged(claim_race(race.recorder, requests=requests, claimants=claimants))


@then(
    parsers.parse(
        'each request had exactly one winning claim and {losers:d} refused with "lease_held"'
    )
)
def one_winner_per_request(race: Race, losers: int) -> None:
    """Some order of the claims explains every answer (the first claim of an open request wins,
    the live lease refuses the rest); an unknown outcome may stand for a winner or a loser."""
    verdict = the_verdict(race)
    verdict.expect_explained(CHECK_CLAUSES["claims"])
    for request_id, outcomes in outcomes_by_request(verdict, "claim").items():
        won, held = outcomes["ok"], outcomes[f"refused_{ErrorCode.LEASE_HELD}"]
        expect(
            won <= 1 and won + held + outcomes["unknown"] == losers + 1,
            CHECK_CLAUSES["claims"],
            f"{request_id}: {won} claim(s) won and {held} refused lease_held, of {losers + 1}",
        )


def outcomes_by_request(verdict: RaceVerdict, operation: str) -> dict[str, Counter[str]]:
    """How each request's calls of one operation ended: `ok`, `unknown`, `refused_<code>`."""
    ended: dict[str, Counter[str]] = defaultdict(Counter)
    for call in (call for call in verdict.history if call.operation == operation):
        key = outcome_key(call).removeprefix(f"{operation}_")
        ended[call.arguments["request_id"]][key] += 1
    return dict(ended)


@when(
    parsers.parse(
        "the holder of each of {requests:d} claimed requests publishes it several times at once"
    )
)
def publishes_race(race: Race, requests: int) -> None:
    race.evidence.append(f"results published at once per request: {list(PUBLISHED_RESULTS)}")
    race.judged(publish_race(race.recorder, requests=requests))


@then(parsers.parse("each request was completed by exactly one publish and its lease closed once"))
def completed_once(race: Race) -> None:
    """Some order of the publishes explains every answer, the reads of each request after its
    batch, and the budget read at the end: one completion per request, every other publish
    answering it or refused as completed, each slice given back once."""
    verdict = the_verdict(race)
    verdict.expect_explained(CHECK_CLAUSES["publishes"])
    completed = sum(1 for ended in outcomes_by_request(verdict, "publish").values() if ended["ok"])
    race.evidence.append(f"requests whose completion a publish acknowledged: {completed}")


@when(
    parsers.parse(
        "{delegations:d} delegations of {budget_slice:d} are made at once from a campaign "
        "with a budget of {budget:d}"
    )
)
def delegations_race(race: Race, delegations: int, budget_slice: int, budget: int) -> None:
    race.judged(
        delegation_race(
            race.recorder,
            budget=budget,
            delegations=delegations,
            budget_slice=budget_slice,
            sessions=5,
        )
    )


@then(
    parsers.parse(
        "at most {most:d} delegations succeeded, and every budget read matches the delegations "
        "that succeeded before it"
    )
)
def budget_held_under_race(race: Race, most: int) -> None:
    """Some order of the delegations explains every answer and every budget read (each slice
    taken once, none taken from budget that was no longer there)."""
    verdict = the_verdict(race)
    verdict.expect_explained(CHECK_CLAUSES["budget"])
    succeeded = verdict.check("linearizable").counts.get("delegate_ok", 0)
    expect(
        0 < succeeded <= most,
        CHECK_CLAUSES["budget"],
        f"{succeeded} delegations succeeded, expected 1 to {most}",
    )


# --------------------------------------------------------------------------
# Crashes the harness causes in the middle of a batch
# --------------------------------------------------------------------------


def timed_warm_up(driver: Driver, warm_up: list[ConcurrentCall]) -> timedelta:
    """Run a first batch, which readies the implementation's workers, and time it."""
    require(driver, Capability.RESTART)
    require(driver, Capability.CONCURRENCY)
    started = time.perf_counter()
    driver.run_concurrently(warm_up)
    return timedelta(seconds=time.perf_counter() - started)


def crash_during(driver: Driver, calls: list[ConcurrentCall], batch_takes: timedelta) -> None:
    """Kill the implementation halfway into a batch (wherever the kill lands, what follows
    must hold). An adapter that cannot kill its implementation makes the scenario not
    applicable."""
    try:
        driver.crash_during(calls, after=batch_takes / 2)
    except DriverError as error:
        if error.code is not ErrorCode.NOT_SUPPORTED:
            raise
        not_applicable(error.message)


def assignment_calls(
    task_id: str, acting: str, assignees: Iterator[str], count: int
) -> list[ConcurrentCall]:
    return [
        ConcurrentCall(
            operation="assign_task",
            arguments={
                "task_id": task_id,
                "assignee_agent_id": next(assignees),
                "acting_agent_id": acting,
            },
        )
        for _ in range(count)
    ]


def alternating(names: list[str]) -> Iterator[str]:
    while True:
        yield from names


@when(
    parsers.re(
        r"the implementation crashes while (?P<count>\d+) agent wakes for task "
        r'"(?P<task_id>[^"]+)" are being evaluated at once'
    )
)
def crash_during_wakes(office: OfficeScene, count: str, task_id: str) -> None:
    """The warm-up batch goes to a task of the step's own, so the scenario's task sees only
    the batch the crash cuts short."""
    warm_task = f"{task_id}-warm-up"
    office.driver.create_task(office.workspace_id, warm_task)
    agents = alternating(["ada", "bob"])
    batch_takes = timed_warm_up(
        office.driver, assignment_calls(warm_task, "ada", agents, int(count))
    )
    calls = assignment_calls(task_id, "ada", agents, int(count))

    def crash() -> list[Wake]:
        crash_during(office.driver, calls, batch_takes)
        office.crashed = True
        return []

    office.act(crash)
