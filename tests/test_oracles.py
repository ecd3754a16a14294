"""Hand-written cases for the oracle models, so that a property failure can be trusted
to point at the implementation rather than at the model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from conformance.driver import (
    BudgetSnapshot,
    ErrorCode,
    Lease,
    OfficeConstants,
    Permissions,
    Producer,
    RequestState,
    WorkRequest,
    WorkRequestLimits,
)
from conformance.oracle.office_window import OfficeWindowOracle
from conformance.oracle.work_requests import WorkRequestOracle, within

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
W = timedelta(minutes=10)
MICRO = timedelta(microseconds=1)
FULL = Permissions(tools=frozenset({"shell", "web"}), devices=frozenset({"gpu"}))
LIMITS = WorkRequestLimits(max_depth=2, max_children_per_session=2, lease_seconds=30)
LEASE = timedelta(seconds=30)


# -- Office allowance window ----------------------------------------------------


def filled_window(allowance: int = 5) -> OfficeWindowOracle:
    """An oracle whose task "t" admitted `allowance` wakes, one a second from T0."""
    oracle = OfficeWindowOracle(allowance, W)
    for second in range(allowance):
        assert oracle.offer("t", T0 + timedelta(seconds=second))
    return oracle


def test_the_wake_past_the_allowance_is_refused() -> None:
    oracle = filled_window()
    assert oracle.in_window("t", T0 + timedelta(seconds=5)) == 5
    assert not oracle.offer("t", T0 + timedelta(seconds=5))


def test_same_instant_wakes_all_count() -> None:
    oracle = OfficeWindowOracle(3, W)
    assert [oracle.offer("t", T0) for _ in range(4)] == [True, True, True, False]


def test_a_wake_exactly_one_window_old_no_longer_counts() -> None:
    oracle = filled_window()
    assert oracle.in_window("t", T0 + W - MICRO) == 5
    assert not oracle.admits("t", T0 + W - MICRO)
    assert oracle.in_window("t", T0 + W) == 4
    assert oracle.admits("t", T0 + W)


def test_refusals_consume_nothing() -> None:
    oracle = filled_window()
    for minute in range(1, 9):
        assert not oracle.offer("t", T0 + timedelta(minutes=minute))
    assert oracle.offer("t", T0 + W)
    assert not oracle.offer("t", T0 + W)


def test_tasks_have_separate_allowances() -> None:
    oracle = filled_window()
    assert oracle.offer("other", T0 + timedelta(seconds=5))
    assert oracle.in_window("other", T0 + timedelta(seconds=5)) == 1


def test_the_oracle_takes_the_reported_constants() -> None:
    constants = OfficeConstants(
        allowance=2,
        window_seconds=60,
        coalesce_window_seconds=5,
        dedup_lookback_seconds=86400,
        producers=list(Producer),
    )
    oracle = OfficeWindowOracle.from_constants(constants)
    assert (oracle.allowance, oracle.window) == (2, timedelta(minutes=1))


@pytest.mark.parametrize(("allowance", "window"), [(0, W), (5, timedelta(0))])
def test_a_meaningless_allowance_is_rejected(allowance: int, window: timedelta) -> None:
    with pytest.raises(ValueError, match="must be"):
        OfficeWindowOracle(allowance, window)


# -- Work requests ------------------------------------------------------------------


def workspace(budget: int = 100) -> WorkRequestOracle:
    """Environment "env" (alice, bob, carol), campaign "c" and alice's root session "root"."""
    oracle = WorkRequestOracle(LIMITS, T0)
    assert oracle.create_environment("env", ["alice", "bob", "carol"]) is None
    assert oracle.create_environment("elsewhere", ["dave"]) is None
    assert oracle.create_campaign("c", "env", budget) is None
    assert oracle.create_session("root", "c", "alice", FULL) is None
    return oracle


def delegate(
    oracle: WorkRequestOracle,
    origin: str,
    name: str,
    budget_slice: int,
    permissions: Permissions = FULL,
    assignee: str | None = None,
) -> WorkRequest:
    """An admitted delegation whose request is `name` and child session `name`-session."""
    assert (
        oracle.delegation_refusal(
            origin,
            deliverable="report",
            budget_slice=budget_slice,
            permissions=permissions,
            assignee=assignee,
        )
        is None
    )
    return oracle.delegate(
        origin,
        deliverable="report",
        acceptance_checks=["cites sources"],
        budget_slice=budget_slice,
        permissions=permissions,
        assignee=assignee,
        request_id=name,
        child_session_id=f"{name}-session",
    )


def refusal(
    oracle: WorkRequestOracle,
    origin: str,
    *,
    deliverable: str = "report",
    budget_slice: int = 10,
    permissions: Permissions = FULL,
    assignee: str | None = None,
) -> ErrorCode | None:
    return oracle.delegation_refusal(
        origin,
        deliverable=deliverable,
        budget_slice=budget_slice,
        permissions=permissions,
        assignee=assignee,
    )


def snapshot(oracle: WorkRequestOracle) -> tuple[int, int, int, int]:
    budget = oracle.budget("c")
    assert isinstance(budget, BudgetSnapshot)
    assert budget.total == budget.available + budget.reserved + budget.spent
    return budget.total, budget.available, budget.reserved, budget.spent


def test_a_delegation_reserves_its_slice_and_creates_an_open_request() -> None:
    oracle = workspace()
    request = delegate(oracle, "root", "r1", 30, assignee="bob")
    assert request.state is RequestState.OPEN
    assert request.lease == Lease(holder=None, generation=0, expires_at=None)
    assert (request.environment_id, request.campaign_id) == ("env", "c")
    assert snapshot(oracle) == (100, 70, 30, 0)


def test_a_nested_slice_comes_out_of_the_childs_remaining() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 30)
    assert refusal(oracle, "r1-session", budget_slice=31) is ErrorCode.INSUFFICIENT_BUDGET
    delegate(oracle, "root", "r2", 70)
    delegate(oracle, "r1-session", "r11", 30)
    assert snapshot(oracle) == (100, 0, 100, 0)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"deliverable": "", "budget_slice": 0}, ErrorCode.INVALID_INPUT),
        ({"budget_slice": -1}, ErrorCode.INVALID_INPUT),
        ({"assignee": "dave"}, ErrorCode.INVALID_INPUT),
        ({"budget_slice": 1000}, ErrorCode.INSUFFICIENT_BUDGET),
        (
            {"permissions": Permissions(devices=frozenset({"camera"})), "budget_slice": 1000},
            ErrorCode.PERMISSION_ESCALATION,
        ),
    ],
)
def test_delegation_refusals_follow_the_check_order(
    changes: dict[str, object], expected: ErrorCode
) -> None:
    oracle = workspace()
    assert refusal(oracle, "root", **changes) is expected  # type: ignore[arg-type]
    assert snapshot(oracle) == (100, 100, 0, 0)


def test_an_unknown_session_is_not_found_after_input_checks() -> None:
    oracle = workspace()
    assert refusal(oracle, "ghost", assignee="dave") is ErrorCode.NOT_FOUND
    assert refusal(oracle, "ghost", deliverable="") is ErrorCode.INVALID_INPUT


def test_depth_and_count_caps() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    delegate(oracle, "r1-session", "r11", 5)
    assert refusal(oracle, "r11-session", budget_slice=1) is ErrorCode.DEPTH_CAP
    delegate(oracle, "root", "r2", 10)
    assert refusal(oracle, "root", budget_slice=1000) is ErrorCode.COUNT_CAP


def test_a_grandchild_cannot_regain_a_dropped_permission() -> None:
    oracle = workspace()
    narrowed = Permissions(tools=frozenset({"web"}))
    delegate(oracle, "root", "r1", 10, permissions=narrowed)
    assert refusal(oracle, "r1-session", budget_slice=1) is ErrorCode.PERMISSION_ESCALATION
    assert within(narrowed, FULL)
    assert not within(FULL, narrowed)


def test_claims_raise_the_generation_and_the_expiry_instant_is_expired() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    assert oracle.claim("r1", "alice") == Lease(holder="alice", generation=1, expires_at=T0 + LEASE)
    assert oracle.claim("r1", "bob") is ErrorCode.LEASE_HELD
    assert oracle.claim("r1", "alice") is ErrorCode.LEASE_HELD
    oracle.set_clock(T0 + LEASE - MICRO)
    assert oracle.claim("r1", "bob") is ErrorCode.LEASE_HELD
    oracle.set_clock(T0 + LEASE)
    listed = oracle.list_requests("env", "carol")
    assert isinstance(listed, list)
    assert [r.state for r in listed] == [RequestState.OPEN]
    assert listed[0].lease.holder == "alice"
    assert oracle.claim("r1", "bob") == Lease(holder="bob", generation=2, expires_at=T0 + 2 * LEASE)


def test_the_expired_holder_cannot_heartbeat_or_publish() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    oracle.claim("r1", "alice")
    oracle.set_clock(T0 + LEASE)
    assert oracle.heartbeat("r1", "alice", 1) is ErrorCode.LEASE_EXPIRED
    assert oracle.publish("r1", "alice", 1, "s3://a") is ErrorCode.LEASE_EXPIRED
    oracle.claim("r1", "bob")
    assert oracle.publish("r1", "alice", 1, "s3://a") is ErrorCode.STALE_GENERATION
    assert oracle.heartbeat("r1", "bob", 1) is ErrorCode.STALE_GENERATION
    assert oracle.heartbeat("r1", "alice", 2) is ErrorCode.STALE_GENERATION


def test_a_heartbeat_extends_the_lease_without_moving_the_generation() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    assert oracle.heartbeat("r1", "alice", 0) is ErrorCode.STALE_GENERATION
    oracle.claim("r1", "alice")
    for step in range(1, 4):
        oracle.set_clock(T0 + step * (LEASE - timedelta(seconds=1)))
        lease = oracle.heartbeat("r1", "alice", 1)
        assert lease == Lease(holder="alice", generation=1, expires_at=oracle.now + LEASE)


def test_only_the_assignee_may_claim() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10, assignee="bob")
    assert oracle.claim("r1", "alice") is ErrorCode.NOT_ASSIGNEE
    assert oracle.claim("r1", "dave") is ErrorCode.NOT_FOUND
    assert oracle.claim("ghost", "bob") is ErrorCode.NOT_FOUND
    assert isinstance(oracle.claim("r1", "bob"), Lease)


def test_publish_completes_once_and_an_exact_retry_answers_the_same() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 30)
    oracle.claim("r1", "bob")
    assert oracle.record_usage("r1-session", 12) is None
    oracle.set_clock(T0 + timedelta(seconds=3))
    completion = oracle.publish("r1", "bob", 1, "s3://result")
    assert not isinstance(completion, ErrorCode)
    assert (completion.budget_returned, completion.completed_at) == (18, T0 + timedelta(seconds=3))
    assert snapshot(oracle) == (100, 88, 0, 12)
    oracle.set_clock(T0 + timedelta(hours=1))
    assert oracle.publish("r1", "bob", 1, "s3://result") == completion
    assert oracle.publish("r1", "bob", 1, "s3://other") is ErrorCode.ALREADY_COMPLETED
    assert oracle.claim("r1", "bob") is ErrorCode.ALREADY_COMPLETED
    assert oracle.heartbeat("r1", "bob", 1) is ErrorCode.ALREADY_COMPLETED
    assert oracle.record_usage("r1-session", 1) is ErrorCode.ALREADY_COMPLETED
    assert snapshot(oracle) == (100, 88, 0, 12)
    request = oracle.get_request("r1")
    assert isinstance(request, WorkRequest)
    assert request.state is RequestState.COMPLETED
    assert request.result_ref == "s3://result"
    assert request.lease.closed_at == T0 + timedelta(seconds=3)
    assert oracle.list_requests("env", "alice") == []


def test_a_completing_grandchild_returns_past_its_completed_parent() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 40)
    delegate(oracle, "r1-session", "r11", 25)
    oracle.claim("r1", "alice")
    oracle.publish("r1", "alice", 1, "done")
    assert snapshot(oracle) == (100, 75, 25, 0)
    assert refusal(oracle, "r1-session", budget_slice=1) is ErrorCode.INSUFFICIENT_BUDGET
    oracle.claim("r11", "bob")
    assert oracle.record_usage("r11-session", 5) is None
    oracle.publish("r11", "bob", 1, "done")
    assert snapshot(oracle) == (100, 95, 0, 5)


def test_a_completing_grandchild_returns_to_its_open_parent() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 40)
    delegate(oracle, "r1-session", "r11", 25)
    oracle.claim("r11", "bob")
    oracle.publish("r11", "bob", 1, "done")
    parent = oracle.get_request("r1")
    assert isinstance(parent, WorkRequest)
    assert snapshot(oracle) == (100, 60, 40, 0)
    assert refusal(oracle, "r1-session", budget_slice=40) is None


def test_usage_never_exceeds_the_slice_or_the_campaign() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 30)
    assert oracle.record_usage("r1-session", 31) is ErrorCode.USAGE_EXCEEDS_SLICE
    assert oracle.record_usage("r1-session", 0) is ErrorCode.INVALID_INPUT
    assert oracle.record_usage("ghost", 1) is ErrorCode.NOT_FOUND
    assert oracle.record_usage("root", 71) is ErrorCode.INSUFFICIENT_BUDGET
    assert oracle.record_usage("root", 70) is None
    assert snapshot(oracle) == (100, 0, 30, 70)


def test_a_non_member_listing_meets_the_unknown_environment_answer() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 30)
    assert oracle.list_requests("env", "dave") is ErrorCode.NOT_FOUND
    assert oracle.list_requests("nowhere", "alice") is ErrorCode.NOT_FOUND
    assert oracle.list_requests("elsewhere", "dave") == []


def test_setup_refusals() -> None:
    oracle = workspace()
    assert oracle.create_environment("env", ["x"]) is ErrorCode.INVALID_INPUT
    assert oracle.create_environment("empty", []) is ErrorCode.INVALID_INPUT
    assert oracle.create_campaign("c2", "nowhere", 10) is ErrorCode.NOT_FOUND
    assert oracle.create_campaign("c2", "env", 0) is ErrorCode.INVALID_INPUT
    assert oracle.create_session("s", "c", "dave", FULL) is ErrorCode.NOT_FOUND
    assert oracle.create_session("root", "c", "alice", FULL) is ErrorCode.INVALID_INPUT
    assert oracle.budget("nowhere") is ErrorCode.NOT_FOUND
    assert oracle.get_request("nowhere") is ErrorCode.NOT_FOUND


def test_live_expiries_lists_only_future_expiries_of_open_work() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    delegate(oracle, "root", "r2", 10)
    oracle.claim("r1", "alice")
    oracle.set_clock(T0 + timedelta(seconds=1))
    oracle.claim("r2", "alice")
    assert oracle.live_expiries() == [T0 + LEASE, T0 + LEASE + timedelta(seconds=1)]
    oracle.publish("r2", "alice", 1, "done")
    oracle.set_clock(T0 + LEASE)
    assert oracle.live_expiries() == []
