"""Permission narrowing: a derived set only shrinks, judged against the originator's own set."""

from __future__ import annotations

import pytest

from conformance.reference.clock import ManualClock
from conformance.reference.db import Database
from conformance.reference.errors import PermissionEscalation
from conformance.reference.workreq.permissions import PermissionSet, ensure_narrowing
from tests.reference.workreq_world import World


def grants(tools: set[str] | None = None, devices: set[str] | None = None) -> PermissionSet:
    return PermissionSet(frozenset(tools or set()), frozenset(devices or set()))


@pytest.mark.parametrize(
    "requested",
    [grants(), grants({"git"}), grants({"git", "shell"}, {"gpu"})],
)
def test_a_subset_narrows(requested: PermissionSet) -> None:
    ensure_narrowing(requested, grants({"git", "shell"}, {"gpu"}))


@pytest.mark.parametrize(
    "requested",
    [
        grants({"browser"}),
        grants(devices={"camera"}),
        grants({"gpu"}),  # a tool named like a held device is still a new tool
        grants(devices={"git"}),
    ],
)
def test_anything_beyond_the_held_set_escalates(requested: PermissionSet) -> None:
    with pytest.raises(PermissionEscalation):
        ensure_narrowing(requested, grants({"git", "shell"}, {"gpu"}))


def test_a_grandchild_is_judged_against_its_parent_not_the_root(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    child = world.delegate(permissions=grants({"git"}, {"gpu"}))
    root_only_tool = grants({"shell"})
    root_only_device = grants(devices={"camera"})
    for requested in (root_only_tool, root_only_device):
        with pytest.raises(PermissionEscalation):
            world.delegate(child.child_session_id, permissions=requested)
    grandchild = world.delegate(child.child_session_id, permissions=grants({"git"}))
    assert grandchild.permissions == grants({"git"})
    with pytest.raises(PermissionEscalation):
        world.delegate(grandchild.child_session_id, permissions=grants(devices={"gpu"}))


def test_an_escalating_delegation_writes_nothing(database: Database, clock: ManualClock) -> None:
    world = World(database, clock)
    before = world.budget()
    with pytest.raises(PermissionEscalation):
        world.delegate(permissions=grants({"root-shell"}))
    assert world.budget() == before
    assert world.service.list_requests("env", "alice") == []
