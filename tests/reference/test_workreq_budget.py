"""Budget slices: reserved at delegation, charged by usage, returned once, always conserved."""

from __future__ import annotations

import pytest

from conformance.reference.clock import ManualClock
from conformance.reference.db import Database
from conformance.reference.errors import AlreadyCompleted, InsufficientBudget, UsageExceedsSlice
from conformance.reference.workreq.views import BudgetView
from tests.reference.workreq_world import ROOT, World


def snapshot(total: int, available: int, reserved: int, spent: int) -> BudgetView:
    return BudgetView("camp", total, available, reserved, spent)


def test_delegation_moves_the_slice_out_of_the_campaign(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    world.delegate(budget_slice=30)
    assert world.budget() == snapshot(100, 70, 30, 0)


def test_usage_is_charged_to_its_source_and_conservation_holds(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    child = world.delegate(budget_slice=30)
    world.service.record_usage(ROOT, 5)
    world.service.record_usage(child.child_session_id, 12)
    after = world.budget()
    assert after == snapshot(100, 65, 18, 17)
    assert after.is_conserved
    assert world.service.get_request(child.request_id).budget_spent == 12


def test_a_grandchild_slice_comes_out_of_the_child_slice(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    child = world.delegate(budget_slice=30)
    world.delegate(child.child_session_id, budget_slice=20)
    assert world.budget() == snapshot(100, 70, 30, 0)
    with pytest.raises(InsufficientBudget):
        world.delegate(child.child_session_id, budget_slice=11)
    world.delegate(child.child_session_id, budget_slice=10)
    with pytest.raises(UsageExceedsSlice):
        world.service.record_usage(child.child_session_id, 1)


def test_usage_beyond_the_slice_is_refused_and_charges_nothing(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    child = world.delegate(budget_slice=10)
    world.service.record_usage(child.child_session_id, 7)
    with pytest.raises(UsageExceedsSlice):
        world.service.record_usage(child.child_session_id, 4)
    assert world.budget() == snapshot(100, 90, 3, 7)
    world.service.record_usage(child.child_session_id, 3)
    assert world.budget() == snapshot(100, 90, 0, 10)


def test_root_usage_beyond_the_campaign_is_refused(database: Database, clock: ManualClock) -> None:
    world = World(database, clock, budget=10)
    with pytest.raises(InsufficientBudget):
        world.service.record_usage(ROOT, 11)
    assert world.budget() == snapshot(10, 10, 0, 0)


def test_completion_returns_the_remaining_to_the_campaign_once(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    child = world.delegate(budget_slice=30)
    world.service.record_usage(child.child_session_id, 12)
    completion = world.complete(child.request_id)
    assert completion.budget_returned == 18
    assert world.budget() == snapshot(100, 88, 0, 12)
    retried = world.service.publish(
        child.request_id, completion.holder, completion.generation, completion.result_ref
    )
    assert retried == completion
    assert world.budget() == snapshot(100, 88, 0, 12)
    with pytest.raises(AlreadyCompleted):
        world.service.record_usage(child.child_session_id, 1)


def test_a_child_completion_refunds_its_open_parent_request(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    parent = world.delegate(budget_slice=50)
    child = world.delegate(parent.child_session_id, budget_slice=20)
    world.service.record_usage(child.child_session_id, 5)
    assert world.complete(child.request_id).budget_returned == 15
    assert world.budget() == snapshot(100, 50, 45, 5)
    world.service.record_usage(parent.child_session_id, 45)
    assert world.complete(parent.request_id).budget_returned == 0
    assert world.budget() == snapshot(100, 50, 0, 50)


def test_a_refund_skips_completed_ancestors(database: Database, clock: ManualClock) -> None:
    """root -> A -> B -> C: with B completed first, C's remaining goes to A, not to B."""
    world = World(database, clock)
    a = world.delegate(budget_slice=60)
    b = world.delegate(a.child_session_id, budget_slice=40)
    c = world.delegate(b.child_session_id, budget_slice=25)
    assert world.complete(b.request_id).budget_returned == 15
    assert world.budget() == snapshot(100, 40, 60, 0)
    world.service.record_usage(c.child_session_id, 5)
    assert world.complete(c.request_id).budget_returned == 20
    assert world.budget() == snapshot(100, 40, 55, 5)
    assert world.complete(a.request_id).budget_returned == 55
    assert world.budget() == snapshot(100, 95, 0, 5)


def test_a_refund_reaches_the_campaign_when_every_ancestor_completed(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    a = world.delegate(budget_slice=60)
    b = world.delegate(a.child_session_id, budget_slice=40)
    assert world.complete(a.request_id).budget_returned == 20
    assert world.budget() == snapshot(100, 60, 40, 0)
    assert world.complete(b.request_id).budget_returned == 40
    assert world.budget() == snapshot(100, 100, 0, 0)


def test_a_completed_request_cannot_fund_new_delegations(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    a = world.delegate(budget_slice=60)
    world.complete(a.request_id)
    with pytest.raises(InsufficientBudget):
        world.delegate(a.child_session_id, budget_slice=1)
    assert world.budget() == snapshot(100, 100, 0, 0)
