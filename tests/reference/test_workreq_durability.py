"""What survives a restart, and who may list: everything lives in the store, nothing in memory."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine
from sqlalchemy.exc import OperationalError

from conformance.reference.clock import ManualClock
from conformance.reference.db import Database
from conformance.reference.errors import LeaseHeld, NotFound
from conformance.reference.schema import create_schema, drop_schema
from conformance.reference.workreq.service import WorkRequestService
from conformance.reference.workreq.settings import SETTINGS
from conformance.reference.workreq.views import BudgetView
from tests.reference.conftest import START
from tests.reference.workreq_world import World, another_service


def test_a_restarted_coordinator_sees_requests_leases_and_budgets(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    parent = world.delegate(budget_slice=40, assignee="bob", kind="subagent")
    child = world.delegate(parent.child_session_id, budget_slice=15)
    granted = world.service.claim(parent.request_id, "bob")
    world.service.record_usage(child.child_session_id, 4)
    before = (world.service.get_request(parent.request_id), world.budget())
    database.dispose()
    with another_service(database, clock) as restarted:
        assert (restarted.get_request(parent.request_id), restarted.budget("camp")) == before
        with pytest.raises(LeaseHeld):
            restarted.claim(parent.request_id, "bob")
        clock.advance(SETTINGS.lease_duration)
        assert restarted.get_request(parent.request_id).state == "open"
        regranted = restarted.claim(parent.request_id, "bob")
        assert regranted.generation == granted.generation + 1
        child_lease = restarted.claim(child.request_id, "carol")
        restarted.publish(child.request_id, "carol", child_lease.generation, "done")
        assert restarted.budget("camp") == BudgetView("camp", 100, 60, 36, 4)


def test_members_list_open_and_in_progress_requests_in_creation_order(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    first, second, third = (world.delegate() for _ in range(3))
    world.service.claim(second.request_id, "bob")
    world.complete(third.request_id)
    listed = world.service.list_requests("env", "erin")
    assert [(r.request_id, r.state) for r in listed] == [
        (first.request_id, "open"),
        (second.request_id, "in_progress"),
    ]


def test_a_non_member_and_an_unknown_environment_get_the_same_refusal(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    world.delegate()
    with pytest.raises(NotFound) as non_member:
        world.service.list_requests("env", "mallory")
    with pytest.raises(NotFound) as unknown:
        world.service.list_requests("elsewhere", "alice")
    assert non_member.value.message == unknown.value.message


@pytest.mark.postgres
def test_a_connection_the_server_dropped_fails_one_operation_and_the_next_reconnects(
    postgres_url: str,
) -> None:
    """No ping guards a checkout: the operation on a dead connection fails, writes nothing,
    and the pool is discarded, so the next operation connects afresh."""
    database = Database(postgres_url)
    drop_schema(database.engine)
    create_schema(database.engine)
    service = WorkRequestService(database, ManualClock(START))
    try:
        service.create_environment("env", ["alice"])
        with database.engine.connect() as connection:
            backend = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        with create_engine(postgres_url).connect() as admin:
            admin.exec_driver_sql(f"SELECT pg_terminate_backend({int(backend)})")
        with pytest.raises(OperationalError):
            service.create_campaign("lost", "env", 100)
        service.create_campaign("kept", "env", 100)
        assert service.budget("kept").total == 100
        with pytest.raises(NotFound):
            service.budget("lost")
    finally:
        database.dispose()
