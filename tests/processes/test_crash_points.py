"""Coordinators SIGKILLed at named crash points, restarted on the same store.

A coordinator launched with REFERENCE_CRASH_AT=<point> kills itself there;
the caller gets no reply, so the history records the call as unknown (`info`)
and the checker must accept either fate for it. The test then restarts that
coordinator (a fresh process on the same store, as an operator would) beside
its peers, and shows from the store and from further calls, racing ones
included, that nothing was lost, nothing doubled, no generation reset, the
allowance matches the persisted rows and the budget is conserved.
"""

from __future__ import annotations

import signal
from datetime import timedelta

import pytest

from conformance.adapters.faults import FaultKind, ImplementationFault
from conformance.concurrency.checker import check_allowance, check_assignment_generations
from conformance.concurrency.history import HistoryRecorder
from conformance.driver import (
    AssignmentResult,
    Completion,
    ConcurrentCall,
    ErrorCode,
    Lease,
    RequestState,
)
from conformance.reference.crash_points import CrashPoint

from .evidence import assert_holds, conclude, searched
from .pool import CoordinatorPool, Store
from .worlds import (
    HOLDERS,
    SLICE,
    agent_assignment,
    agent_wake_rows,
    concurrent_agent_wakes,
    concurrent_claims,
    delegation,
    office_cast,
    successes,
    work_request_world,
)

pytestmark = pytest.mark.cost(seconds=15)

BUDGET = 100


def _crash_and_restart(
    pool: CoordinatorPool,
    store: Store,
    recorder: HistoryRecorder,
    point: CrashPoint,
    operation: str,
    **arguments: object,
) -> int:
    """Have a coordinator armed at `point` make the call and die there; restart it. Its index."""
    crasher = pool.add(store.launch(crash_at=point))
    with pool.speaking(crasher), pytest.raises(ImplementationFault) as raised:
        recorder.invoke(operation, **arguments)
    fault = raised.value
    assert fault.kind is FaultKind.CRASH, fault.evidence()
    assert f"status {-signal.SIGKILL}" in fault.message, fault.evidence()
    pool.replace(crasher, store.launch())
    return crasher


def test_a_claim_killed_before_its_reply_holds_once_and_generations_go_on(
    store: Store, pool: CoordinatorPool, recorder: HistoryRecorder
) -> None:
    limits = pool.describe().work_requests
    assert limits is not None
    work_request_world(recorder, "camp", budget=BUDGET)
    request_id = recorder.invoke("delegate", **delegation("camp-root-0")).request_id

    restarted = _crash_and_restart(
        pool,
        store,
        recorder,
        CrashPoint.CLAIM_COMMITTED,
        "claim",
        request_id=request_id,
        holder="holder-0",
    )

    with pool.speaking(restarted):
        seen = recorder.invoke("get_request", request_id=request_id)
    assert (seen.lease.holder, seen.lease.generation) == ("holder-0", 1), "the claim was lost"
    assert seen.state == RequestState.IN_PROGRESS
    contenders = HOLDERS[: 2 * len(pool.processes)]
    refused = recorder.run_concurrently(concurrent_claims(request_id, contenders))
    assert {outcome.error for outcome in refused} == {ErrorCode.LEASE_HELD}, "a second lease"

    recorder.advance_clock(timedelta(seconds=limits.lease_seconds))
    raced = recorder.run_concurrently(concurrent_claims(request_id, HOLDERS))
    granted = successes(raced, Lease)
    assert [lease.generation for lease in granted] == [2], "the generation did not go on"
    completion = recorder.invoke(
        "publish",
        request_id=request_id,
        holder=granted[0].holder,
        generation=2,
        result_ref="result-after-restart",
    )
    assert completion.budget_returned == SLICE
    snapshot = recorder.invoke("budget", campaign_id="camp")
    assert (snapshot.available, snapshot.reserved, snapshot.spent) == (BUDGET, 0, 0)

    conclude(recorder, pool, searched(recorder, unknown=1))


def test_a_publish_killed_before_its_reply_completes_once_and_returns_budget_once(
    store: Store, pool: CoordinatorPool, recorder: HistoryRecorder
) -> None:
    work_request_world(recorder, "camp", budget=BUDGET)
    request = recorder.invoke("delegate", **delegation("camp-root-0"))
    lease = recorder.invoke("claim", request_id=request.request_id, holder="holder-0")
    recorder.invoke("record_usage", session_id=request.child_session_id, amount=3)
    publish = {
        "request_id": request.request_id,
        "holder": "holder-0",
        "generation": lease.generation,
        "result_ref": "result-1",
    }

    restarted = _crash_and_restart(
        pool, store, recorder, CrashPoint.RESULT_WRITTEN, "publish", **publish
    )

    with pool.speaking(restarted):
        seen = recorder.invoke("get_request", request_id=request.request_id)
    assert (seen.state, seen.result_ref) == (RequestState.COMPLETED, "result-1"), "result lost"
    assert seen.lease.closed_at is not None
    expected = (BUDGET - 3, 0, 3)
    snapshot = recorder.invoke("budget", campaign_id="camp")
    assert (snapshot.available, snapshot.reserved, snapshot.spent) == expected
    other = {**publish, "result_ref": "result-2"}
    answers = recorder.run_concurrently(
        [ConcurrentCall(operation="publish", arguments=publish) for _ in pool.processes]
        + [ConcurrentCall(operation="publish", arguments=other)]
    )
    retries, different = answers[:-1], answers[-1]
    assert all(answer.ok for answer in retries), [answer.message for answer in retries]
    assert {retry.budget_returned for retry in successes(retries, Completion)} == {SLICE - 3}
    assert different.error == ErrorCode.ALREADY_COMPLETED
    snapshot = recorder.invoke("budget", campaign_id="camp")
    assert (snapshot.available, snapshot.reserved, snapshot.spent) == expected, "returned twice"

    conclude(recorder, pool, searched(recorder, unknown=1))


def test_a_wake_killed_between_count_and_insert_leaves_the_allowance_matching_the_rows(
    store: Store, pool: CoordinatorPool, recorder: HistoryRecorder
) -> None:
    office = pool.describe().office
    assert office is not None
    early = [f"early-{index}" for index in range(office.allowance - 1)]
    racers = [f"racer-{index}" for index in range(2 * (len(pool.processes) + 1))]
    office_cast(recorder, [*early, "crashed", *racers, "late"])
    recorder.invoke("create_task", workspace_id="ws", task_id="task")
    for assignee in early:
        recorder.invoke("assign_task", **agent_assignment("task", assignee))

    restarted = _crash_and_restart(
        pool,
        store,
        recorder,
        CrashPoint.GATE_COUNTED,
        "assign_task",
        **agent_assignment("task", "crashed"),
    )

    with pool.speaking(restarted):
        task = recorder.invoke("get_task", task_id="task")
        rows = agent_wake_rows(recorder.invoke("list_runs")).get("task", 0)
    assert (task.assignee_agent_id, task.assignment_generation) == ("crashed", len(early) + 1)
    assert rows == len(early), "the killed wake's run was inserted, or an earlier one lost"
    raced = recorder.run_concurrently(concurrent_agent_wakes("task", racers))
    assignments = successes(raced, AssignmentResult)
    assert len(assignments) == len(racers), "an assignment failed"
    admitted = sum(1 for result in assignments if result.wake and result.wake.outcome == "queued")
    assert 1 <= admitted <= office.allowance - rows + len(pool.processes) - 1
    late = recorder.invoke("assign_task", **agent_assignment("task", "late"))
    assert late.wake.outcome == "rate_limited"
    assert late.generation == len(early) + 1 + len(racers) + 1, "a generation was reset or lost"
    persisted = agent_wake_rows(recorder.invoke("list_runs"))["task"]
    assert persisted == len(early) + admitted, "the allowance disagrees with the persisted rows"

    history = recorder.operations()
    window = timedelta(seconds=office.window_seconds)
    allowance = check_allowance(history, allowance=office.allowance, window=window)
    generations = check_assignment_generations(history)
    conclude(recorder, pool, allowance, generations)
    assert_holds(allowance, generations, unknown=1)
    assert allowance.counts["largest_over_admission"] <= len(pool.processes) - 1
