"""A coordinator armed at a crash point races its peers, round after round.

One process of the pool is launched with REFERENCE_CRASH_AT=<point>. Each
round gives every process one call of the same race; whenever the armed one
wins the race and so reaches its point, it dies mid-call, its outcome is
unknown (`info`) in the history, and it is relaunched, armed again, on the same
store. The checker must hold on these histories, unknown outcomes and all, and
the store must hold exactly one winner per race.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from conformance.concurrency.checker import check_allowance, check_assignment_generations
from conformance.concurrency.history import HistoryRecorder
from conformance.driver import ConcurrentCall, ErrorCode, RequestState
from conformance.reference.crash_points import CrashPoint

from .evidence import assert_holds, conclude, searched
from .pool import CoordinatorPool, Store
from .settings import SOAK
from .worlds import (
    HOLDERS,
    admitted_wakes,
    agent_assignment,
    agent_wake_rows,
    concurrent_agent_wakes,
    concurrent_claims,
    delegation,
    office_cast,
    wake_outcomes,
    work_request_world,
)

pytestmark = pytest.mark.cost(seconds=20)

ROUNDS = 6 * SOAK
BUDGET = 100


def _race_armed(
    pool: CoordinatorPool,
    store: Store,
    recorder: HistoryRecorder,
    point: CrashPoint,
    next_race: Callable[[int], list[ConcurrentCall]],
) -> int:
    """ROUNDS races of one call per process, one process armed at `point`; how often it died.

    `next_race(round)` prepares a round and returns its calls, one per process
    in pool order, so that the armed process (the last) makes the last call.
    """
    armed = pool.add(store.launch(crash_at=point))
    deaths = 0
    for round_number in range(ROUNDS):
        calls = next_race(round_number)
        assert len(calls) == len(pool.processes)
        outcome = recorder.run_concurrently(calls)[armed]
        if outcome.error == ErrorCode.INDETERMINATE:
            deaths += 1
            pool.replace(armed, store.launch(crash_at=point))
    print(f"[{store.database}] armed at {point.value}: died in {deaths} of {ROUNDS} races")
    return deaths


def test_claims_racing_an_armed_coordinator_grant_one_lease_per_request(
    store: Store, pool: CoordinatorPool, recorder: HistoryRecorder
) -> None:
    requests: list[str] = []

    def next_race(round_number: int) -> list[ConcurrentCall]:
        campaign = f"camp-{round_number}"
        work_request_world(recorder, campaign, budget=BUDGET)
        request = recorder.invoke("delegate", **delegation(f"{campaign}-root-0"))
        requests.append(request.request_id)
        return concurrent_claims(request.request_id, HOLDERS[: len(pool.processes)])

    deaths = _race_armed(pool, store, recorder, CrashPoint.CLAIM_COMMITTED, next_race)
    for request_id in requests:
        seen = recorder.invoke("get_request", request_id=request_id)
        assert seen.lease.generation == 1, f"{request_id}: not exactly one claim took effect"
        assert seen.state == RequestState.IN_PROGRESS

    conclude(recorder, pool, searched(recorder, unknown=deaths))


def test_publishes_racing_an_armed_coordinator_complete_once_and_return_budget_once(
    store: Store, pool: CoordinatorPool, recorder: HistoryRecorder
) -> None:
    campaigns: list[str] = []

    def next_race(round_number: int) -> list[ConcurrentCall]:
        campaign = f"camp-{round_number}"
        campaigns.append(campaign)
        work_request_world(recorder, campaign, budget=BUDGET)
        request = recorder.invoke("delegate", **delegation(f"{campaign}-root-0"))
        lease = recorder.invoke("claim", request_id=request.request_id, holder="holder-0")
        publish = {
            "request_id": request.request_id,
            "holder": "holder-0",
            "generation": lease.generation,
            "result_ref": f"result-{round_number}",
        }
        return [ConcurrentCall(operation="publish", arguments=publish) for _ in pool.processes]

    deaths = _race_armed(pool, store, recorder, CrashPoint.RESULT_WRITTEN, next_race)
    for campaign in campaigns:
        snapshot = recorder.invoke("budget", campaign_id=campaign)
        assert (snapshot.available, snapshot.reserved, snapshot.spent) == (BUDGET, 0, 0)

    search = searched(recorder, unknown=deaths)
    conclude(recorder, pool, search)
    assert search.counts.get("publish_ok", 0) + deaths >= ROUNDS


def test_agent_wakes_racing_an_armed_coordinator_keep_the_allowance_to_the_rows(
    store: Store, pool: CoordinatorPool, recorder: HistoryRecorder
) -> None:
    office = pool.describe().office
    assert office is not None
    early = [f"early-{index}" for index in range(office.allowance - 1)]
    racers = [f"racer-{index}" for index in range(len(pool.processes) + 1)]
    office_cast(recorder, early + racers)

    def next_race(round_number: int) -> list[ConcurrentCall]:
        task = f"task-{round_number}"
        recorder.invoke("create_task", workspace_id="ws", task_id=task)
        for assignee in early:
            recorder.invoke("assign_task", **agent_assignment(task, assignee))
        return concurrent_agent_wakes(task, racers[: len(pool.processes)])

    deaths = _race_armed(pool, store, recorder, CrashPoint.GATE_COUNTED, next_race)

    history = recorder.operations()
    window = timedelta(seconds=office.window_seconds)
    allowance = check_allowance(history, allowance=office.allowance, window=window)
    generations = check_assignment_generations(history)
    conclude(recorder, pool, allowance, generations)
    assert_holds(allowance, generations, unknown=deaths)
    assert allowance.counts["largest_over_admission"] <= len(pool.processes) - 1
    assert set(wake_outcomes(history)) == {"queued", "rate_limited"}, wake_outcomes(history)
    assert agent_wake_rows(recorder.invoke("list_runs")) == admitted_wakes(history)
