"""Races between real coordinator processes on one store, judged on the history: the office's
by the checker's bound, the work requests' by the linearizability search.

Several `python -m conformance.wire.serve` processes share one PostgreSQL schema, or
one SQLite file in WAL mode; a concurrent batch gives each process its share
of the calls on a thread of its own. Nothing but the database is shared, so
only the database can decide the races. Every operation is recorded, and the
assertions are the checker's verdicts on the history plus what the store
holds afterwards.
"""

from __future__ import annotations

from datetime import timedelta

from conformance.concurrency.checker import check_allowance, check_assignment_generations
from conformance.concurrency.history import HistoryRecorder
from conformance.driver import ConcurrentCall

from .evidence import assert_holds, conclude, searched
from .pool import CoordinatorPool
from .settings import PROCESSES, SOAK
from .worlds import (
    HOLDERS,
    SESSIONS,
    SLICE,
    admitted_wakes,
    agent_assignment,
    agent_wake_rows,
    concurrent_agent_wakes,
    concurrent_claims,
    delegation,
    json_delegation,
    office_cast,
    wake_outcomes,
    work_request_world,
)

CLAIM_REQUESTS = 6 * SOAK
CLAIM_GENERATIONS = 2
OFFICE_ROUNDS = 12 * SOAK
WAKES_PER_ROUND = 2 * PROCESSES
BUDGET_ROUNDS = 3 * SOAK
BUDGET, DELEGATIONS = 100, 20


def test_claims_from_several_processes_have_one_winner_per_generation(
    pool: CoordinatorPool, recorder: HistoryRecorder
) -> None:
    limits = pool.describe().work_requests
    assert limits is not None
    for number in range(CLAIM_REQUESTS):
        work_request_world(recorder, f"camp-{number}", budget=SLICE)
        request = recorder.invoke("delegate", **delegation(f"camp-{number}-root-0"))
        for _ in range(CLAIM_GENERATIONS):
            recorder.run_concurrently(concurrent_claims(request.request_id, HOLDERS))
            recorder.invoke("get_request", request_id=request.request_id)
            recorder.advance_clock(timedelta(seconds=limits.lease_seconds))

    search = searched(recorder)
    conclude(recorder, pool, search)
    granted = CLAIM_REQUESTS * CLAIM_GENERATIONS
    assert search.counts["claim_ok"] == granted
    assert search.counts["claim_refused_lease_held"] == granted * (len(HOLDERS) - 1)


def test_agent_wakes_from_several_processes_over_admit_at_most_processes_minus_one(
    pool: CoordinatorPool, recorder: HistoryRecorder
) -> None:
    office = pool.describe().office
    assert office is not None
    early = [f"early-{index}" for index in range(office.allowance - 1)]
    racers = [f"racer-{index}" for index in range(WAKES_PER_ROUND)]
    office_cast(recorder, early + racers)
    for round_number in range(OFFICE_ROUNDS):
        task = f"task-{round_number}"
        recorder.invoke("create_task", workspace_id="ws", task_id=task)
        for index, assignee in enumerate(early):
            with pool.speaking(index % PROCESSES):
                recorder.invoke("assign_task", **agent_assignment(task, assignee))
        recorder.run_concurrently(concurrent_agent_wakes(task, racers))
        recorder.advance_clock(timedelta(seconds=1))

    history = recorder.operations()
    window = timedelta(seconds=office.window_seconds)
    allowance = check_allowance(history, allowance=office.allowance, window=window)
    generations = check_assignment_generations(history)
    conclude(recorder, pool, allowance, generations)
    assert_holds(allowance, generations)
    assert allowance.counts["largest_concurrency"] >= 2, "the processes never overlapped"
    assert allowance.counts["largest_over_admission"] <= PROCESSES - 1
    assert generations.counts["committed"] == OFFICE_ROUNDS * (len(early) + len(racers))
    assert set(wake_outcomes(history)) == {"queued", "rate_limited"}, wake_outcomes(history)
    assert agent_wake_rows(recorder.invoke("list_runs")) == admitted_wakes(history)


def test_delegations_from_several_processes_conserve_the_budget(
    pool: CoordinatorPool, recorder: HistoryRecorder
) -> None:
    for round_number in range(BUDGET_ROUNDS):
        campaign = f"camp-{round_number}"
        work_request_world(recorder, campaign, budget=BUDGET)
        recorder.run_concurrently(
            [
                ConcurrentCall(
                    operation="delegate",
                    arguments=json_delegation(f"{campaign}-root-{index % SESSIONS}"),
                )
                for index in range(DELEGATIONS)
            ]
        )
        snapshot = recorder.invoke("budget", campaign_id=campaign)
        assert (snapshot.available, snapshot.reserved, snapshot.spent) == (0, BUDGET, 0)

    search = searched(recorder)
    conclude(recorder, pool, search)
    assert search.counts["delegate_ok"] == BUDGET_ROUNDS * BUDGET // SLICE
    assert search.counts["delegate_refused_insufficient_budget"] == BUDGET_ROUNDS * (
        DELEGATIONS - BUDGET // SLICE
    )
