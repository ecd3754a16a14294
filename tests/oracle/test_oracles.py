"""Hand-written cases for the oracle models, so that a property failure can be trusted
to point at the implementation rather than at the model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from conformance.driver import (
    BudgetSnapshot,
    Completion,
    DelegationKind,
    ErrorCode,
    Lease,
    OfficeConstants,
    Permissions,
    Producer,
    RequestState,
    WorkRequest,
    WorkRequestLimits,
)
from conformance.oracle.grants import within
from conformance.oracle.office_window import OfficeWindowOracle
from conformance.oracle.refusals import Refusals
from conformance.oracle.work_requests import WorkRequestOracle

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


def test_the_admitted_instants_are_kept_oldest_first() -> None:
    oracle = filled_window(3)
    assert not oracle.offer("t", T0 + timedelta(seconds=3))
    assert oracle.admitted("t") == tuple(T0 + timedelta(seconds=s) for s in range(3))
    assert oracle.admitted("other") == ()


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

ESCALATION = frozenset({ErrorCode.PERMISSION_ESCALATION})


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
    """An accepted delegation whose request is `name` and child session `name`-session."""
    assert refusals(oracle, origin, budget_slice=budget_slice, permissions=permissions) == set()
    return oracle.delegate(
        origin,
        kind=DelegationKind.SPAWN,
        deliverable="report",
        acceptance_checks=["cites sources"],
        budget_slice=budget_slice,
        permissions=permissions,
        assignee=assignee,
        request_id=name,
        child_session_id=f"{name}-session",
    )


def refusals(
    oracle: WorkRequestOracle,
    origin: str,
    *,
    deliverable: str = "report",
    budget_slice: int = 10,
    permissions: Permissions = FULL,
    assignee: str | None = None,
) -> Refusals:
    return oracle.delegation_refusals(
        origin,
        deliverable=deliverable,
        budget_slice=budget_slice,
        permissions=permissions,
        assignee=assignee,
    )


def complete(
    oracle: WorkRequestOracle, request_id: str, holder: str, generation: int
) -> Completion:
    assert oracle.publish_refusals(request_id, holder, generation, "done") == set()
    return oracle.complete(request_id, holder, generation, "done")


def snapshot(oracle: WorkRequestOracle) -> tuple[int, int, int, int]:
    budget = oracle.budget("c")
    assert isinstance(budget, BudgetSnapshot)
    assert budget.total == budget.available + budget.reserved + budget.spent
    return budget.total, budget.available, budget.reserved, budget.spent


def test_a_delegation_reserves_its_slice_and_creates_an_open_request() -> None:
    oracle = workspace()
    request = delegate(oracle, "root", "r1", 30, assignee="bob")
    assert request.state is RequestState.OPEN
    assert request.kind is DelegationKind.SPAWN
    assert request.lease == Lease(holder=None, generation=0, expires_at=None)
    assert (request.environment_id, request.campaign_id) == ("env", "c")
    assert snapshot(oracle) == (100, 70, 30, 0)


def test_the_unclaimed_generation_the_implementation_reports_is_adopted() -> None:
    oracle = workspace()
    oracle.delegate(
        "root",
        kind=DelegationKind.SUBAGENT,
        deliverable="report",
        acceptance_checks=[],
        budget_slice=5,
        permissions=FULL,
        assignee=None,
        request_id="r1",
        child_session_id="r1-session",
        generation=40,
    )
    assert oracle.claim("r1", "bob").generation == 41


def test_a_nested_slice_comes_out_of_the_childs_remaining() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 30)
    assert refusals(oracle, "r1-session", budget_slice=31) == {ErrorCode.INSUFFICIENT_BUDGET}
    delegate(oracle, "root", "r2", 70)
    assert (oracle.available_to("root"), oracle.available_to("r1-session")) == (0, 30)
    delegate(oracle, "r1-session", "r11", 30)
    assert snapshot(oracle) == (100, 0, 100, 0)
    assert (oracle.available_to("r1-session"), oracle.available_to("r11-session")) == (0, 30)


@pytest.mark.parametrize(
    ("reading", "left_after_carving"), [("kit", 5), ("from-campaign", 10)], ids=["kit", "campaign"]
)
def test_a_nested_remainder_goes_back_where_its_slice_came_from(
    reading: str, left_after_carving: int
) -> None:
    """Read as from-campaign (WR-1), a nested slice leaves its parent's untouched, so its
    remainder must go to the campaign: given to the parent, that one could spend 15 of 10."""
    oracle = workspace()
    oracle.follow("WR-1", reading)
    delegate(oracle, "root", "r1", 10)
    delegate(oracle, "r1-session", "r11", 5)
    assert oracle.remaining_of("r1-session") == left_after_carving
    complete(oracle, "r11", "bob", oracle.claim("r11", "bob").generation)
    assert oracle.remaining_of("r1-session") == 10
    assert snapshot(oracle) == (100, 90, 10, 0)
    assert oracle.usage_refusals("r1-session", 11) == {ErrorCode.USAGE_EXCEEDS_SLICE}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"deliverable": "", "budget_slice": 0}, {ErrorCode.INVALID_INPUT}),
        ({"budget_slice": -1}, {ErrorCode.INVALID_INPUT}),
        ({"assignee": "dave"}, {ErrorCode.INVALID_INPUT}),
        ({"budget_slice": 1000}, {ErrorCode.INSUFFICIENT_BUDGET}),
        (
            {"permissions": Permissions(devices=frozenset({"camera"})), "budget_slice": 1000},
            {ErrorCode.PERMISSION_ESCALATION, ErrorCode.INSUFFICIENT_BUDGET},
        ),
        (
            {"assignee": "dave", "budget_slice": 1000},
            {ErrorCode.INVALID_INPUT, ErrorCode.INSUFFICIENT_BUDGET},
        ),
    ],
)
def test_every_applicable_delegation_refusal_is_predicted(
    changes: dict[str, object], expected: set[ErrorCode]
) -> None:
    oracle = workspace()
    assert refusals(oracle, "root", **changes) == expected  # type: ignore[arg-type]
    assert snapshot(oracle) == (100, 100, 0, 0)


def test_an_unknown_session_is_not_found() -> None:
    oracle = workspace()
    assert refusals(oracle, "ghost", assignee="dave") == {ErrorCode.NOT_FOUND}
    assert refusals(oracle, "ghost", deliverable="") == {
        ErrorCode.NOT_FOUND,
        ErrorCode.INVALID_INPUT,
    }


def test_depth_and_count_caps() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    delegate(oracle, "r1-session", "r11", 5)
    assert refusals(oracle, "r11-session", budget_slice=1) == {ErrorCode.DEPTH_CAP}
    delegate(oracle, "root", "r2", 10)
    assert refusals(oracle, "root", budget_slice=1000) == {
        ErrorCode.COUNT_CAP,
        ErrorCode.INSUFFICIENT_BUDGET,
    }


def test_an_escalation_alone_may_be_narrowed_instead_of_refused() -> None:
    oracle = workspace()
    narrowed = Permissions(tools=frozenset({"web"}))
    delegate(oracle, "root", "r1", 10, permissions=narrowed)
    escalation = refusals(oracle, "r1-session", budget_slice=1)
    assert escalation == ESCALATION
    assert WorkRequestOracle.may_narrow(escalation)
    assert not WorkRequestOracle.may_narrow(refusals(oracle, "r1-session", budget_slice=11))
    assert not WorkRequestOracle.may_narrow(frozenset())
    assert within(narrowed, FULL)
    assert not within(FULL, narrowed)


def test_a_grant_wider_than_the_originator_cannot_be_recorded() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10, permissions=Permissions(tools=frozenset({"web"})))
    with pytest.raises(ValueError, match="must be refused"):
        oracle.delegate(
            "r1-session",
            kind=DelegationKind.SUBAGENT,
            deliverable="report",
            acceptance_checks=[],
            budget_slice=1,
            permissions=FULL,
            assignee=None,
            request_id="r11",
            child_session_id="r11-session",
        )


def test_a_delegation_from_a_completed_requests_session_is_refused() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    oracle.claim("r1", "alice")
    complete(oracle, "r1", "alice", 1)
    assert refusals(oracle, "r1-session", budget_slice=1) == {
        ErrorCode.ALREADY_COMPLETED,
        ErrorCode.INSUFFICIENT_BUDGET,
    }


def test_claims_raise_the_generation_and_the_expiry_instant_is_expired() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    assert oracle.claim("r1", "alice") == Lease(holder="alice", generation=1, expires_at=T0 + LEASE)
    assert oracle.claim_refusals("r1", "bob") == {ErrorCode.LEASE_HELD}
    assert oracle.claim_refusals("r1", "alice") == {ErrorCode.LEASE_HELD}
    assert oracle.held_by("r1", "alice") == Lease(
        holder="alice", generation=1, expires_at=T0 + LEASE
    )
    assert oracle.held_by("r1", "bob") is None
    oracle.set_clock(T0 + LEASE - MICRO)
    assert oracle.claim_refusals("r1", "bob") == {ErrorCode.LEASE_HELD}
    oracle.set_clock(T0 + LEASE)
    assert oracle.held_by("r1", "alice") is None
    listed = oracle.list_requests("env", "carol")
    assert isinstance(listed, list)
    assert [r.state for r in listed] == [RequestState.OPEN]
    assert listed[0].lease.holder == "alice"
    assert oracle.claim_refusals("r1", "bob") == set()
    assert oracle.claim("r1", "bob") == Lease(holder="bob", generation=2, expires_at=T0 + 2 * LEASE)


def test_a_claim_adopts_the_implementations_generation_and_expiry() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    lease = oracle.claim("r1", "alice", generation=7, expires_at=T0 + 2 * LEASE)
    assert lease == Lease(holder="alice", generation=7, expires_at=T0 + 2 * LEASE)
    assert oracle.live_expiries() == [T0 + 2 * LEASE]
    assert oracle.heartbeat_refusals("r1", "alice", 1) == {ErrorCode.STALE_GENERATION}
    assert oracle.heartbeat_refusals("r1", "alice", 7) == set()


def test_the_live_holder_may_be_granted_again() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    oracle.claim("r1", "alice")
    assert oracle.claim("r1", "alice", generation=2).generation == 2
    with pytest.raises(ValueError, match="must be refused"):
        oracle.claim("r1", "bob")


def test_the_expired_holder_cannot_heartbeat_or_publish() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    oracle.claim("r1", "alice")
    oracle.set_clock(T0 + LEASE)
    assert oracle.heartbeat_refusals("r1", "alice", 1) == {ErrorCode.LEASE_EXPIRED}
    assert oracle.publish_refusals("r1", "alice", 1, "s3://a") == {ErrorCode.LEASE_EXPIRED}
    assert oracle.publish_refusals("r1", "bob", 1, "s3://a") == {
        ErrorCode.LEASE_EXPIRED,
        ErrorCode.STALE_GENERATION,
    }
    oracle.claim("r1", "bob")
    assert oracle.publish_refusals("r1", "alice", 1, "s3://a") == {ErrorCode.STALE_GENERATION}
    assert oracle.heartbeat_refusals("r1", "bob", 1) == {ErrorCode.STALE_GENERATION}
    assert oracle.heartbeat_refusals("r1", "alice", 2) == {ErrorCode.STALE_GENERATION}
    assert oracle.heartbeat_refusals("r1", "dave", 2) == {
        ErrorCode.NOT_FOUND,
        ErrorCode.STALE_GENERATION,
    }
    assert oracle.publish_refusals("r1", "bob", 2, "") == {ErrorCode.INVALID_INPUT}
    oracle.set_clock(T0 + 2 * LEASE)
    assert oracle.publish_refusals("r1", "alice", 1, "s3://a") == {
        ErrorCode.STALE_GENERATION,
        ErrorCode.LEASE_EXPIRED,
    }


def test_a_heartbeat_extends_the_lease_without_moving_the_generation() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    assert oracle.heartbeat_refusals("r1", "alice", 0) == {
        ErrorCode.STALE_GENERATION,
        ErrorCode.LEASE_EXPIRED,
    }
    oracle.claim("r1", "alice")
    for step in range(1, 4):
        oracle.set_clock(T0 + step * (LEASE - timedelta(seconds=1)))
        assert oracle.heartbeat_refusals("r1", "alice", 1) == set()
        lease = oracle.extend("r1")
        assert lease == Lease(holder="alice", generation=1, expires_at=oracle.now + LEASE)


def test_a_heartbeat_adopts_the_implementations_expiry() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10)
    oracle.claim("r1", "alice")
    assert oracle.extend("r1", T0 + 2 * LEASE).expires_at == T0 + 2 * LEASE
    oracle.set_clock(T0 + 2 * LEASE)
    with pytest.raises(ValueError, match="no live lease"):
        oracle.extend("r1")


def test_only_the_assignee_may_claim() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 10, assignee="bob")
    assert oracle.claim_refusals("r1", "alice") == {ErrorCode.NOT_ASSIGNEE}
    assert oracle.claim_refusals("r1", "dave") == {ErrorCode.NOT_FOUND, ErrorCode.NOT_ASSIGNEE}
    assert oracle.claim_refusals("ghost", "bob") == {ErrorCode.NOT_FOUND}
    assert isinstance(oracle.claim("r1", "bob"), Lease)
    assert oracle.claim_refusals("r1", "alice") == {ErrorCode.NOT_ASSIGNEE, ErrorCode.LEASE_HELD}


def test_publish_completes_once_and_an_exact_retry_answers_the_same() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 30, assignee="bob")
    oracle.claim("r1", "bob")
    oracle.record_usage("r1-session", 12)
    oracle.set_clock(T0 + timedelta(seconds=3))
    assert oracle.recorded_retry("r1", "bob", 1, "s3://result") is None
    completion = oracle.complete("r1", "bob", 1, "s3://result")
    assert (completion.budget_returned, completion.completed_at) == (18, T0 + timedelta(seconds=3))
    assert snapshot(oracle) == (100, 88, 0, 12)
    oracle.set_clock(T0 + timedelta(hours=1))
    assert oracle.recorded_retry("r1", "bob", 1, "s3://result") == completion
    assert oracle.recorded_retry("r1", "bob", 1, "s3://other") is None
    assert oracle.publish_refusals("r1", "bob", 1, "s3://other") == {
        ErrorCode.ALREADY_COMPLETED,
        ErrorCode.LEASE_EXPIRED,
    }
    assert oracle.claim_refusals("r1", "bob") == {ErrorCode.ALREADY_COMPLETED}
    assert oracle.claim_refusals("r1", "alice") == {
        ErrorCode.ALREADY_COMPLETED,
        ErrorCode.NOT_ASSIGNEE,
    }
    assert oracle.heartbeat_refusals("r1", "alice", 1) == {
        ErrorCode.ALREADY_COMPLETED,
        ErrorCode.STALE_GENERATION,
        ErrorCode.LEASE_EXPIRED,
    }
    assert oracle.usage_refusals("r1-session", 1) == {
        ErrorCode.ALREADY_COMPLETED,
        ErrorCode.USAGE_EXCEEDS_SLICE,
    }
    assert snapshot(oracle) == (100, 88, 0, 12)
    request = oracle.get_request("r1")
    assert isinstance(request, WorkRequest)
    assert request.state is RequestState.COMPLETED
    assert request.result_ref == "s3://result"
    assert request.lease.closed_at == T0 + timedelta(seconds=3)
    assert oracle.list_requests("env", "alice") == []


def test_a_completion_adopts_the_implementations_instant() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 30)
    oracle.claim("r1", "bob")
    instant = T0 + timedelta(milliseconds=5)
    assert oracle.complete("r1", "bob", 1, "done", completed_at=instant).completed_at == instant
    request = oracle.get_request("r1")
    assert isinstance(request, WorkRequest)
    assert request.lease.closed_at == instant
    with pytest.raises(ValueError, match="must be refused"):
        oracle.complete("r1", "bob", 1, "again")


def test_a_completing_grandchild_returns_past_its_completed_parent() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 40)
    delegate(oracle, "r1-session", "r11", 25)
    oracle.claim("r1", "alice")
    complete(oracle, "r1", "alice", 1)
    assert snapshot(oracle) == (100, 75, 25, 0)
    assert ErrorCode.INSUFFICIENT_BUDGET in refusals(oracle, "r1-session", budget_slice=1)
    oracle.claim("r11", "bob")
    oracle.record_usage("r11-session", 5)
    complete(oracle, "r11", "bob", 1)
    assert snapshot(oracle) == (100, 95, 0, 5)


def test_a_completing_grandchild_returns_to_its_open_parent() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 40)
    delegate(oracle, "r1-session", "r11", 25)
    oracle.claim("r11", "bob")
    complete(oracle, "r11", "bob", 1)
    assert snapshot(oracle) == (100, 60, 40, 0)
    assert refusals(oracle, "r1-session", budget_slice=40) == set()


def test_usage_never_exceeds_the_slice_or_the_campaign() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 30)
    assert oracle.usage_refusals("r1-session", 31) == {ErrorCode.USAGE_EXCEEDS_SLICE}
    assert oracle.usage_refusals("r1-session", 0) == {ErrorCode.INVALID_INPUT}
    assert oracle.usage_refusals("ghost", 1) == {ErrorCode.NOT_FOUND}
    assert oracle.usage_refusals("root", 71) == {ErrorCode.INSUFFICIENT_BUDGET}
    assert oracle.usage_refusals("root", 70) == set()
    oracle.record_usage("root", 70)
    assert snapshot(oracle) == (100, 0, 30, 70)
    with pytest.raises(ValueError, match="must be refused"):
        oracle.record_usage("root", 1)


def test_a_non_member_listing_meets_the_unknown_environment_answer() -> None:
    oracle = workspace()
    delegate(oracle, "root", "r1", 30)
    assert oracle.listing_refusals("env", "dave") == oracle.listing_refusals("nowhere", "alice")
    assert oracle.listing_refusals("env", "dave") == {ErrorCode.NOT_FOUND}
    assert oracle.list_requests("env", "dave") is ErrorCode.NOT_FOUND
    assert oracle.listing_refusals("elsewhere", "dave") == set()
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
    assert oracle.fresh_expiry() == T0 + LEASE + timedelta(seconds=1)
    complete(oracle, "r2", "alice", 1)
    oracle.set_clock(T0 + LEASE)
    assert oracle.live_expiries() == []
