"""Delegation: both kinds create a request and a child session; caps and refusals in order."""

from __future__ import annotations

import pytest

from conformance.reference.clock import ManualClock
from conformance.reference.db import Database
from conformance.reference.errors import (
    CountCap,
    DepthCap,
    DomainError,
    InsufficientBudget,
    InvalidInput,
    NotFound,
    PermissionEscalation,
)
from conformance.reference.workreq.models import DelegationSession
from conformance.reference.workreq.permissions import PermissionSet
from conformance.reference.workreq.settings import SETTINGS, WorkRequestSettings
from tests.reference.workreq_world import CAMPAIGN, ROOT, World

TOO_MUCH = PermissionSet(tools=frozenset({"sudo"}))


def chain_to_max_depth(world: World) -> str:
    """The child session at the deepest depth the cap allows."""
    origin = ROOT
    for _ in range(SETTINGS.max_depth):
        origin = world.delegate(origin, budget_slice=10).child_session_id
    return origin


def test_the_limits_are_the_declared_settings() -> None:
    assert (
        WorkRequestSettings(max_depth=3, max_children_per_session=4, lease_seconds=30.0) == SETTINGS
    )


@pytest.mark.parametrize("kind", ["spawn", "subagent"])
def test_both_kinds_create_a_request_and_a_child_session(
    database: Database, clock: ManualClock, kind: str
) -> None:
    world = World(database, clock)
    granted = PermissionSet(tools=frozenset({"git"}))
    request = world.delegate(budget_slice=25, permissions=granted, assignee="bob", kind=kind)
    assert request.kind == kind
    assert (request.state, request.lease.generation, request.lease.holder) == ("open", 0, None)
    assert (request.originating_session_id, request.campaign_id) == (ROOT, CAMPAIGN)
    assert (request.budget_slice, request.budget_spent, request.assignee) == (25, 0, "bob")
    assert request.acceptance_checks == ("it exists",)
    with database.transaction() as tx:
        child = tx.get(DelegationSession, request.child_session_id)
        assert child is not None
        assert (child.parent_session_id, child.depth, child.request_id) == (
            ROOT,
            1,
            request.request_id,
        )
        assert PermissionSet.from_lists(child.tools, child.devices) == granted


def test_the_depth_cap_refuses_a_child_beyond_max_depth(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    deepest = chain_to_max_depth(world)
    with pytest.raises(DepthCap):
        world.delegate(deepest, budget_slice=1)


def test_the_count_cap_counts_completed_children_too(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    first = world.delegate()
    for _ in range(SETTINGS.max_children_per_session - 1):
        world.delegate()
    world.complete(first.request_id)
    with pytest.raises(CountCap):
        world.delegate()


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"kind": "fork"}, InvalidInput),
        ({"deliverable": "  "}, InvalidInput),
        ({"budget_slice": 0}, InvalidInput),
        ({"assignee": "mallory"}, InvalidInput),
        ({"assignee": ""}, InvalidInput),
        ({"origin": "nobody"}, NotFound),
    ],
)
def test_bad_orders_are_refused_and_write_nothing(
    database: Database, clock: ManualClock, changes: dict[str, object], expected: type[DomainError]
) -> None:
    world = World(database, clock)
    order: dict[str, object] = {
        "kind": "spawn",
        "origin": ROOT,
        "deliverable": "a report",
        "budget_slice": 10,
        "assignee": None,
    }
    order.update(changes)
    before = world.budget()
    with pytest.raises(expected):
        world.service.delegate(
            str(order["kind"]),
            str(order["origin"]),
            deliverable=str(order["deliverable"]),
            acceptance_checks=[],
            budget_slice=int(str(order["budget_slice"])),
            permissions=PermissionSet(),
            assignee=None if order["assignee"] is None else str(order["assignee"]),
        )
    assert world.budget() == before
    assert world.service.list_requests("env", "alice") == []


def test_refusals_come_in_the_canonical_order(database: Database, clock: ManualClock) -> None:
    """Peel one violation at a time off an order that breaks every rule."""
    world = World(database, clock, budget=1000)
    deepest = chain_to_max_depth(world)
    full = world.delegate(budget_slice=50)
    for _ in range(SETTINGS.max_children_per_session):
        world.delegate(full.child_session_id, budget_slice=1)
    fresh = world.delegate(budget_slice=10)
    cases: list[tuple[str, PermissionSet, int, type[DomainError]]] = [
        ("nobody", TOO_MUCH, 0, InvalidInput),
        ("nobody", TOO_MUCH, 999, NotFound),
        (deepest, TOO_MUCH, 999, DepthCap),
        (full.child_session_id, TOO_MUCH, 999, CountCap),
        (fresh.child_session_id, TOO_MUCH, 999, PermissionEscalation),
        (fresh.child_session_id, PermissionSet(), 11, InsufficientBudget),
    ]
    for origin, permissions, budget_slice, expected in cases:
        with pytest.raises(expected):
            world.delegate(origin, budget_slice, permissions=permissions)
    assert world.delegate(fresh.child_session_id, budget_slice=10).budget_slice == 10
