"""The history checker on hand-written histories: each check passes a good one and catches bad ones.

Times are small integers: an operation spans [start, end], and two operations
overlap unless one ends before the other starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from conformance.concurrency.checker import (
    check_allowance,
    check_assignment_generations,
    check_budget,
    check_claims,
    check_definite_share,
    check_publishes,
    over_admission_evidence,
)
from conformance.concurrency.history import Event, Operation, operations
from conformance.driver import ErrorCode

T0 = datetime(2026, 1, 1, tzinfo=UTC)
LEASE = timedelta(seconds=30)
WINDOW = timedelta(minutes=10)


@dataclass
class History:
    """A history written by hand, one operation (invoke plus completion) per call."""

    events: list[Event] = field(default_factory=list)

    def op(
        self,
        operation: str,
        span: tuple[int, int | None],
        outcome: str,
        *,
        value: Any = None,
        error: ErrorCode | None = None,
        clock: datetime = T0,
        **arguments: Any,
    ) -> History:
        process = len(self.events) + 1
        start, end = span
        common = {"process": process, "operation": operation, "arguments": arguments}
        self.events.append(Event(type="invoke", time_ns=start, clock=clock, **common))
        if end is not None:
            self.events.append(
                Event(type=outcome, time_ns=end, value=value, error=error, clock=clock, **common)
            )
        return self

    def operations(self) -> list[Operation]:
        return operations(sorted(self.events, key=lambda event: event.time_ns))


# --------------------------------------------------------------------------
# Work-request histories
# --------------------------------------------------------------------------


def _lease(holder: str, generation: int, at: datetime = T0) -> dict[str, Any]:
    return {
        "holder": holder,
        "generation": generation,
        "expires_at": (at + LEASE).isoformat(),
        "closed_at": None,
    }


def _request(generation: int = 0, **changes: Any) -> dict[str, Any]:
    value = {
        "request_id": "r",
        "campaign_id": "c",
        "originating_session_id": "s",
        "child_session_id": "child",
        "budget_slice": 10,
        "state": "open",
        "lease": {"holder": None, "generation": generation, "expires_at": None, "closed_at": None},
    }
    return {**value, **changes}


def _delegated() -> History:
    return History().op("delegate", (0, 1), "ok", value=_request(), originating_session_id="s")


def _claim(history: History, span: tuple[int, int | None], holder: str, **result: Any) -> None:
    history.op("claim", span, result.pop("outcome", "ok"), request_id="r", holder=holder, **result)


def test_claims_one_winner_and_lease_held_losers_pass() -> None:
    history = _delegated()
    _claim(history, (2, 5), "a", value=_lease("a", 1))
    _claim(history, (2, 6), "b", outcome="fail", error=ErrorCode.LEASE_HELD)
    _claim(history, (3, 7), "c", outcome="fail", error=ErrorCode.LEASE_HELD)
    history.op("get_request", (8, 9), "ok", value=_request(1, lease=_lease("a", 1)), request_id="r")

    result = check_claims(history.operations())

    assert result.ok, result
    assert result.counts["succeeded"] == 1
    assert result.counts["refused_lease_held"] == 2
    assert result.operations_checked == 3


def test_claims_two_winners_of_one_generation_are_caught() -> None:
    history = _delegated()
    _claim(history, (2, 5), "a", value=_lease("a", 1))
    _claim(history, (2, 6), "b", value=_lease("b", 1))

    result = check_claims(history.operations())

    assert not result.ok
    assert any("generation 1 granted 2 times" in v for v in result.violations), result


def test_claims_skipping_a_generation_is_caught_when_steps_are_exact() -> None:
    history = _delegated()
    _claim(history, (2, 5), "a", value=_lease("a", 2))

    assert check_claims(history.operations()).ok, "the spec asks for a rise, not a step of one"
    result = check_claims(history.operations(), exact_steps=True)

    assert any("skip 1 values" in v for v in result.violations), result


def test_claims_gap_is_excused_by_an_unknown_claim() -> None:
    history = _delegated()
    _claim(history, (2, 4), "a", outcome="info", error=ErrorCode.INDETERMINATE)
    _claim(history, (5, 6), "b", value=_lease("b", 2, T0 + LEASE), clock=T0 + LEASE)

    result = check_claims(history.operations())

    assert result.ok, result
    assert result.counts["unknown"] == 1
    assert result.counts["succeeded"] == 1


def test_claims_generation_going_backwards_in_real_time_is_caught() -> None:
    history = _delegated()
    _claim(history, (2, 3), "a", value=_lease("a", 2))
    _claim(history, (4, 5), "b", value=_lease("b", 1, T0 + LEASE), clock=T0 + LEASE)

    result = check_claims(history.operations())

    assert any("after process" in v for v in result.violations), result


def test_claims_lease_held_without_any_live_lease_is_caught() -> None:
    history = _delegated()
    _claim(history, (2, 3), "a", value=_lease("a", 1))
    _claim(history, (4, 5), "b", outcome="fail", error=ErrorCode.LEASE_HELD, clock=T0 + LEASE)

    result = check_claims(history.operations())

    assert any("no lease could have been live" in v for v in result.violations), result


def test_claims_loser_refused_with_the_wrong_code_is_caught() -> None:
    history = _delegated()
    _claim(history, (2, 5), "a", value=_lease("a", 1))
    _claim(history, (2, 6), "b", outcome="fail", error=ErrorCode.STALE_GENERATION)

    result = check_claims(history.operations())

    assert any("not a typed conflict" in v for v in result.violations), result


def test_claims_read_seeing_an_older_generation_is_caught() -> None:
    history = _delegated()
    _claim(history, (2, 3), "a", value=_lease("a", 1))
    history.op("get_request", (4, 5), "ok", value=_request(0), request_id="r")

    result = check_claims(history.operations())

    assert any("read generation 0 after generation 1" in v for v in result.violations), result


# -- publishes -------------------------------------------------------------------


def _completion(ref: str, generation: int = 1, at: datetime = T0) -> dict[str, Any]:
    return {
        "request_id": "r",
        "holder": "a",
        "generation": generation,
        "result_ref": ref,
        "completed_at": at.isoformat(),
        "budget_returned": 10,
    }


def _publish(history: History, span: tuple[int, int | None], ref: str, **result: Any) -> None:
    generation = result.pop("generation", 1)
    history.op(
        "publish",
        span,
        result.pop("outcome", "ok"),
        request_id="r",
        holder="a",
        generation=generation,
        result_ref=ref,
        **result,
    )


def _claimed() -> History:
    history = _delegated()
    _claim(history, (2, 3), "a", value=_lease("a", 1))
    return history


def _completed_read(closed_at: datetime = T0) -> dict[str, Any]:
    lease = {**_lease("a", 1), "closed_at": closed_at.isoformat()}
    return _request(1, state="completed", lease=lease)


def test_publishes_one_accepted_with_a_retry_and_a_refusal_pass() -> None:
    history = _claimed()
    _publish(history, (4, 7), "x", value=_completion("x"))
    _publish(history, (4, 8), "x", value=_completion("x"))
    _publish(history, (5, 8), "y", outcome="fail", error=ErrorCode.ALREADY_COMPLETED)
    history.op("get_request", (9, 10), "ok", value=_completed_read(), request_id="r")

    result = check_publishes(history.operations())

    assert result.ok, result
    assert result.counts == {
        "requests": 1,
        "unknown": 0,
        "uncompleted": 0,
        "accepted": 1,
        "retries": 1,
        "lease_closes": 1,
        "refused_already_completed": 1,
        "operations": 3,
    }


def test_publishes_two_different_completions_are_caught() -> None:
    history = _claimed()
    _publish(history, (4, 7), "x", value=_completion("x"))
    _publish(history, (4, 8), "y", value=_completion("y"))

    result = check_publishes(history.operations())

    assert any("2 different completions accepted" in v for v in result.violations), result


def test_publishes_acknowledging_a_result_that_was_not_recorded_is_caught() -> None:
    history = _claimed()
    _publish(history, (4, 7), "x", value=_completion("y"))

    result = check_publishes(history.operations())

    assert any("told ok" in v for v in result.violations), result


def test_publishes_under_a_superseded_generation_are_caught() -> None:
    history = _claimed()
    later = T0 + LEASE
    _claim(history, (4, 5), "a", value=_lease("a", 2, later), clock=later)
    _publish(history, (6, 7), "x", value=_completion("x", 1, later), clock=later)

    result = check_publishes(history.operations())

    assert any("although generation 2" in v for v in result.violations), result


def test_publishes_closing_the_lease_twice_is_caught() -> None:
    history = _claimed()
    _publish(history, (4, 7), "x", value=_completion("x"))
    reopened = T0 + timedelta(seconds=1)
    history.op("get_request", (8, 9), "ok", value=_completed_read(reopened), request_id="r")

    result = check_publishes(history.operations())

    assert any("closed at 2 instants" in v for v in result.violations), result


def test_publishes_already_completed_before_any_completion_is_caught() -> None:
    history = _claimed()
    _publish(history, (4, 5), "y", outcome="fail", error=ErrorCode.ALREADY_COMPLETED)
    _publish(history, (6, 7), "x", value=_completion("x"))

    result = check_publishes(history.operations())

    assert any("before any completion" in v for v in result.violations), result


def test_publishes_refusal_is_excused_by_an_unknown_publish() -> None:
    history = _claimed()
    _publish(history, (4, None), "x", outcome="info")
    _publish(history, (6, 7), "y", outcome="fail", error=ErrorCode.ALREADY_COMPLETED)

    result = check_publishes(history.operations())

    assert result.ok, result
    assert result.counts["unknown"] == 1
    assert result.counts["accepted"] == 0


@pytest.mark.parametrize(
    "error", [ErrorCode.STALE_GENERATION, ErrorCode.LEASE_EXPIRED, ErrorCode.NOT_FOUND]
)
def test_publishes_a_fencing_refusal_of_the_current_live_holder_is_caught(error: ErrorCode) -> None:
    history = _claimed()
    _publish(history, (4, 5), "x", outcome="fail", error=error)

    result = check_publishes(history.operations())

    assert any(f"refused {error}" in v for v in result.violations), result
    assert result.counts["uncompleted"] == 1


def test_publishes_stale_generation_is_justified_by_a_newer_grant() -> None:
    history = _claimed()
    later = T0 + LEASE
    _claim(history, (4, 5), "b", value=_lease("b", 2, later), clock=later)
    _publish(history, (6, 7), "x", outcome="fail", error=ErrorCode.STALE_GENERATION, clock=later)

    assert check_publishes(history.operations()).ok


def test_publishes_lease_expired_is_justified_once_the_lease_ran_out() -> None:
    history = _claimed()
    late = T0 + LEASE + timedelta(seconds=1)
    _publish(history, (4, 5), "x", outcome="fail", error=ErrorCode.LEASE_EXPIRED, clock=late)

    assert check_publishes(history.operations()).ok


def test_publishes_a_request_left_uncompleted_is_counted_unless_an_outcome_is_unknown() -> None:
    refused, unknown = _claimed(), _claimed()
    _publish(refused, (4, 5), "x", outcome="fail", error=ErrorCode.STALE_GENERATION, generation=7)
    _publish(unknown, (4, None), "x", outcome="info")

    assert check_publishes(refused.operations()).counts["uncompleted"] == 1
    assert check_publishes(unknown.operations()).counts["uncompleted"] == 0


# -- budget ------------------------------------------------------------------------


def _campaign(budget: int = 100, sessions: int = 2) -> History:
    history = History().op("create_campaign", (0, 1), "ok", campaign_id="c", budget=budget)
    for index in range(sessions):
        history.op("create_session", (2, 3), "ok", session_id=f"s{index}", campaign_id="c")
    return history


def _delegation(
    history: History, span: tuple[int, int | None], session: str, amount: int, **result: Any
) -> None:
    outcome = result.pop("outcome", "ok")
    value = None
    if outcome == "ok":
        request = f"r-{session}-{span[0]}"
        value = _request(request_id=request, originating_session_id=session, budget_slice=amount)
        value["child_session_id"] = f"child-{request}"
    history.op(
        "delegate",
        span,
        outcome,
        value=value,
        originating_session_id=session,
        budget_slice=amount,
        **result,
    )


def _snapshot(history: History, available: int, reserved: int, spent: int = 0) -> None:
    value = {
        "campaign_id": "c",
        "total": 100,
        "available": available,
        "reserved": reserved,
        "spent": spent,
    }
    history.op("budget", (20, 21), "ok", value=value, campaign_id="c")


def test_budget_concurrent_delegations_within_the_budget_pass() -> None:
    history = _campaign()
    _delegation(history, (4, 8), "s0", 60)
    _delegation(history, (4, 9), "s1", 60, outcome="fail", error=ErrorCode.INSUFFICIENT_BUDGET)
    _snapshot(history, available=40, reserved=60)

    result = check_budget(history.operations())

    assert result.ok, result
    assert result.counts["delegations_succeeded"] == 1
    assert result.counts["refused_insufficient_budget"] == 1
    assert result.counts["largest_consumption"] == 60


def test_budget_overdrawn_by_concurrent_delegations_is_caught() -> None:
    history = _campaign()
    _delegation(history, (4, 8), "s0", 60)
    _delegation(history, (4, 9), "s1", 60)

    result = check_budget(history.operations())

    assert any("took 120 of a budget of 100" in v for v in result.violations), result


@pytest.mark.parametrize(
    ("available", "reserved", "spent", "expected"),
    [(50, 60, 0, "creates budget"), (-10, 110, 0, "available -10 < 0")],
)
def test_budget_snapshots_that_create_budget_or_go_negative_are_caught(
    available: int, reserved: int, spent: int, expected: str
) -> None:
    history = _campaign()
    _snapshot(history, available, reserved, spent)

    result = check_budget(history.operations())

    assert any(expected in v for v in result.violations), result


def test_a_snapshot_that_lost_budget_created_none_and_is_no_violation() -> None:
    """The text forbids creating budget; a remainder forfeited (parts below the total) is an
    open question (WR-3), which the history checker leaves to the checks that cite it."""
    history = _campaign()
    _delegation(history, (4, 8), "s0", 30)
    _snapshot(history, 70, 20, 0)

    result = check_budget(history.operations())

    assert result.ok, result


def test_budget_refusal_with_budget_left_is_caught() -> None:
    history = _campaign()
    _delegation(history, (4, 8), "s0", 30)
    _delegation(history, (10, 11), "s1", 60, outcome="fail", error=ErrorCode.INSUFFICIENT_BUDGET)

    result = check_budget(history.operations())

    assert any("at most 30 of 100" in v for v in result.violations), result


def test_budget_refusal_after_a_nested_delegation_is_not_judged() -> None:
    """Read as from-campaign (WR-1), the nested 40 comes out of the campaign, leaving 10: the
    refusal of 30 is right, though the root sessions took only 50 of 100."""
    history = _campaign()
    _delegation(history, (4, 5), "s0", 50)
    _delegation(history, (6, 7), "child-r-s0-4", 40)
    _delegation(history, (8, 9), "s1", 30, outcome="fail", error=ErrorCode.INSUFFICIENT_BUDGET)

    result = check_budget(history.operations())

    assert result.ok, result


def test_budget_unknown_delegation_excuses_a_refusal_and_is_not_counted_as_taken() -> None:
    history = _campaign()
    _delegation(history, (4, 8), "s0", 60)
    _delegation(history, (4, None), "s1", 60, outcome="info")
    _delegation(history, (5, 9), "s0", 30, outcome="fail", error=ErrorCode.INSUFFICIENT_BUDGET)

    result = check_budget(history.operations())

    assert result.ok, result
    assert result.counts["unknown"] == 1
    assert result.counts["largest_consumption"] == 60


# --------------------------------------------------------------------------
# Office allowance histories (allowance 2 keeps them short)
# --------------------------------------------------------------------------

ALLOWANCE = 2


def _wake(
    history: History,
    span: tuple[int, int | None],
    outcome: str,
    *,
    clock: datetime = T0,
    generation: int = 1,
) -> None:
    if outcome == "info":
        history.op("assign_task", span, "info", clock=clock, **_assignment_args())
        return
    value = {
        "task_id": "t",
        "assignee_agent_id": "b",
        "generation": generation,
        "wake": {"outcome": outcome, "run_id": None},
    }
    history.op("assign_task", span, "ok", value=value, clock=clock, **_assignment_args())


def _assignment_args() -> dict[str, str]:
    return {"task_id": "t", "assignee_agent_id": "b", "acting_agent_id": "a"}


def _check_allowance(history: History) -> Any:
    return check_allowance(history.operations(), allowance=ALLOWANCE, window=WINDOW)


def test_allowance_race_within_the_bound_passes() -> None:
    history = History()
    _wake(history, (0, 1), "queued")
    for start in (2, 2, 3):
        _wake(history, (start, 8), "queued" if start == 2 else "rate_limited")

    result = _check_allowance(history)

    assert result.ok, result
    assert result.counts["largest_over_admission"] == 1
    assert result.counts["largest_concurrency"] == 3
    assert result.operations_checked == 4
    assert "largest over-admission observed: 1" in over_admission_evidence(result)


def test_allowance_refusal_before_the_allowance_is_used_is_caught() -> None:
    history = History()
    _wake(history, (0, 1), "queued")
    _wake(history, (2, 3), "rate_limited")

    result = _check_allowance(history)

    assert any("refused with at most 1" in v for v in result.violations), result


def test_allowance_admission_after_the_allowance_was_used_is_caught() -> None:
    history = History()
    for start in (0, 2, 4):
        _wake(history, (start, start + 1), "queued")

    result = _check_allowance(history)

    assert any("had finished before it began" in v for v in result.violations), result
    assert result.counts["largest_over_admission"] == 1


def test_allowance_over_admission_beyond_the_concurrency_is_caught() -> None:
    """Five wakes overlapping two at a time: three beyond the allowance of 2 is more than K."""
    history = History()
    _wake(history, (0, 3), "queued")
    _wake(history, (2, 5), "queued")
    _wake(history, (4, 7), "queued")
    _wake(history, (6, 9), "queued")
    _wake(history, (8, 11), "queued")

    result = _check_allowance(history)

    assert result.counts["largest_concurrency"] == 2
    assert any("with at most 2 wakes in flight" in v for v in result.violations), result


def test_allowance_over_admission_of_exactly_k_is_within_the_spec_bound() -> None:
    """Two overlapping wakes after the allowance filled: K = 2 beyond is what the text allows
    (the sequential rule still catches these admissions: they came after N had finished)."""
    history = History()
    _wake(history, (0, 1), "queued")
    _wake(history, (2, 3), "queued")
    _wake(history, (4, 7), "queued")
    _wake(history, (5, 8), "queued")

    result = _check_allowance(history)

    assert result.counts["largest_over_admission"] == 2
    assert not any("in flight" in v for v in result.violations), result
    assert any("had finished before it began" in v for v in result.violations), result


def test_allowance_window_is_half_open() -> None:
    edge, inside = History(), History()
    for history, later in ((edge, WINDOW), (inside, WINDOW - timedelta(microseconds=1))):
        _wake(history, (0, 1), "queued")
        _wake(history, (2, 3), "queued")
        _wake(history, (4, 5), "queued", clock=T0 + later)

    assert _check_allowance(edge).ok, _check_allowance(edge)
    assert not _check_allowance(inside).ok


def test_allowance_refusal_is_excused_by_an_unknown_wake() -> None:
    history = History()
    _wake(history, (0, 1), "queued")
    _wake(history, (2, None), "info")
    _wake(history, (3, 4), "rate_limited")

    result = _check_allowance(history)

    assert result.ok, result
    assert result.counts["unknown"] == 1
    assert result.counts["admitted"] == 1
    assert result.counts["largest_over_admission"] == 0


# -- assignment generations --------------------------------------------------------


def _created_task() -> History:
    task = {"task_id": "t", "assignment_generation": 0}
    return History().op("create_task", (0, 1), "ok", value=task, task_id="t")


def test_assignment_generations_rising_by_one_pass() -> None:
    history = _created_task()
    for generation in (1, 2, 3):
        _wake(history, (2, 9), "queued", generation=generation)

    result = check_assignment_generations(history.operations())

    assert result.ok, result
    assert result.counts["committed"] == 3


def test_assignment_generations_lost_increment_is_caught() -> None:
    history = _created_task()
    for _ in range(3):
        _wake(history, (2, 9), "queued", generation=1)

    result = check_assignment_generations(history.operations())

    assert any("generation 1 granted 3 times" in v for v in result.violations), result


def test_assignment_generation_gap_is_excused_by_an_unknown_mutation() -> None:
    history = _created_task()
    _wake(history, (2, None), "info")
    _wake(history, (3, 9), "queued", generation=2)

    assert check_assignment_generations(history.operations()).ok


# --------------------------------------------------------------------------
# Rules added after adversarial implementations passed: each on a history that must fail
# --------------------------------------------------------------------------


def test_claims_a_second_holder_granted_while_the_first_lease_is_live_is_caught() -> None:
    """Two winners of one batch under a frozen clock: distinct, rising generations hide it
    from the generation rule; the lease of the first is still live at the second's instant."""
    history = _delegated()
    _claim(history, (2, 6), "a", value=_lease("a", 1))
    _claim(history, (3, 7), "b", value=_lease("b", 2))

    result = check_claims(history.operations())

    assert any("while generation 1 of 'a' was live" in v for v in result.violations), result


def test_claims_a_grant_after_the_previous_lease_expired_passes() -> None:
    history = _delegated()
    _claim(history, (2, 3), "a", value=_lease("a", 1))
    later = T0 + LEASE + timedelta(microseconds=1)
    _claim(history, (4, 5), "b", value=_lease("b", 2, later), clock=later)

    assert check_claims(history.operations()).ok


def test_claims_a_heartbeat_keeps_the_lease_live_for_the_rule() -> None:
    history = _delegated()
    _claim(history, (2, 3), "a", value=_lease("a", 1))
    renewed_at = T0 + LEASE / 2
    history.op(
        "heartbeat",
        (4, 5),
        "ok",
        value=_lease("a", 1, renewed_at),
        clock=renewed_at,
        request_id="r",
        holder="a",
        generation=1,
    )
    after_first_expiry = T0 + LEASE + timedelta(seconds=1)
    _claim(history, (6, 7), "b", value=_lease("b", 2, after_first_expiry), clock=after_first_expiry)

    result = check_claims(history.operations())

    assert any("was live until" in v for v in result.violations), result


def test_budget_a_lost_update_under_concurrency_is_caught() -> None:
    """Both concurrent delegations were acknowledged, the snapshot shows one slice taken."""
    history = _campaign()
    _delegation(history, (4, 8), "s0", 30)
    _delegation(history, (4, 9), "s1", 30)
    _snapshot(history, available=70, reserved=30)

    result = check_budget(history.operations())

    assert any("leave 40" in v for v in result.violations), result


def test_budget_handed_back_in_a_later_snapshot_while_balanced_is_caught() -> None:
    """Balanced and never negative, but 20 went back to available that no completion returned."""
    history = _campaign()
    _delegation(history, (4, 8), "s0", 60)
    _snapshot(history, available=60, reserved=40)

    result = check_budget(history.operations())

    assert any("reads 60 available" in v for v in result.violations), result


def test_budget_a_completion_returned_twice_is_caught_and_counted() -> None:
    history = _campaign()
    _delegation(history, (4, 5), "s0", 10)
    request_id = "r-s0-4"
    for start in (6, 7):
        history.op(
            "publish",
            (start, start + 3),
            "ok",
            value={**_completion("x"), "request_id": request_id},
            request_id=request_id,
            holder="a",
            generation=1,
            result_ref="x",
        )
    _snapshot(history, available=110, reserved=0)

    result = check_budget(history.operations())

    assert result.counts["returned_acknowledged"] == 10
    assert result.counts["returned_observed"] == 20
    assert any("reads 110 available" in v for v in result.violations), result


def test_budget_an_overlapping_delegation_widens_the_ledger() -> None:
    history = _campaign()
    _delegation(history, (4, 8), "s0", 30)
    _delegation(history, (19, 25), "s1", 30)
    history.op(
        "budget",
        (20, 21),
        "ok",
        value={"campaign_id": "c", "total": 100, "available": 40, "reserved": 60, "spent": 0},
        campaign_id="c",
    )

    assert check_budget(history.operations()).ok


def test_definite_share_a_batch_of_only_unknown_outcomes_is_caught() -> None:
    history = History()
    for process in range(4):
        history.op("claim", (process, None), "info", request_id="r", holder=f"h{process}")
    ops = [_in_batch(op, 1) for op in history.operations()]

    result = check_definite_share(ops, minimum=0.9)

    assert not result.ok
    assert "0 of 4 outcomes definite" in result.violations[0], result
    assert result.counts["indeterminate"] == 4


def test_definite_share_with_no_batch_at_all_is_caught() -> None:
    result = check_definite_share(_claimed().operations(), minimum=0.9)

    assert result.violations == ("no concurrent batch was recorded",)


def _in_batch(op: Operation, batch: int) -> Operation:
    return Operation(
        process=op.process,
        operation=op.operation,
        arguments=op.arguments,
        outcome=op.outcome,
        value=op.value,
        error=op.error,
        invoked_ns=op.invoked_ns,
        completed_ns=op.completed_ns,
        clock=op.clock,
        batch=batch,
    )
