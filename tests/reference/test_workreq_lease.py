"""The generation-fenced lease: claims, heartbeats, expiry at the exact instant, the fence."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import Connection, event, true

from conformance.reference.clock import ManualClock
from conformance.reference.db import Database
from conformance.reference.errors import (
    AlreadyCompleted,
    LeaseExpired,
    LeaseHeld,
    NotAssignee,
    NotFound,
    StaleGeneration,
)
from conformance.reference.workreq import lease, liveness
from conformance.reference.workreq.models import REQUESTS
from conformance.reference.workreq.settings import SETTINGS
from conformance.reference.workreq.store import find_request
from tests.reference.workreq_world import World, another_service

LEASE = SETTINGS.lease_duration
TICK = timedelta(microseconds=1)


def test_liveness_is_half_open(clock: ManualClock) -> None:
    expiry = clock.now() + LEASE
    assert liveness.is_live(expiry, expiry - TICK)
    assert not liveness.is_live(expiry, expiry)
    assert not liveness.is_live(None, expiry)


def test_each_claim_moves_the_generation_by_one(database: Database, clock: ManualClock) -> None:
    world = World(database, clock)
    request = world.delegate()
    generations = []
    for holder in ("bob", "carol", "bob"):
        granted = world.service.claim(request.request_id, holder)
        assert (granted.holder, granted.expires_at) == (holder, clock.now() + LEASE)
        generations.append(granted.generation)
        clock.advance(LEASE)
    assert generations == [1, 2, 3]


def test_a_heartbeat_extends_the_lease_and_keeps_the_generation(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    request = world.delegate()
    granted = world.service.claim(request.request_id, "bob")
    clock.advance(LEASE - TICK)
    renewed = world.service.heartbeat(request.request_id, "bob", granted.generation)
    assert (renewed.generation, renewed.expires_at) == (granted.generation, clock.now() + LEASE)
    clock.advance(LEASE - TICK)
    with pytest.raises(LeaseHeld):
        world.service.claim(request.request_id, "carol")


def test_at_the_expiry_instant_the_lease_is_gone(database: Database, clock: ManualClock) -> None:
    world = World(database, clock)
    request = world.delegate()
    granted = world.service.claim(request.request_id, "bob")
    clock.advance(LEASE - TICK)
    assert world.service.get_request(request.request_id).state == "in_progress"
    clock.advance(TICK)
    reported = world.service.get_request(request.request_id)
    assert reported.state == "open"
    assert (reported.lease.holder, reported.lease.generation) == ("bob", granted.generation)
    assert [listed.state for listed in world.service.list_requests("env", "carol")] == ["open"]
    with pytest.raises(LeaseExpired):
        world.service.heartbeat(request.request_id, "bob", granted.generation)
    with pytest.raises(LeaseExpired):
        world.service.publish(request.request_id, "bob", granted.generation, "late")
    assert world.service.get_request(request.request_id).lease.expires_at == granted.expires_at
    assert world.service.claim(request.request_id, "carol").generation == granted.generation + 1


def test_a_stale_generation_is_rejected(database: Database, clock: ManualClock) -> None:
    world = World(database, clock)
    request = world.delegate()
    world.service.claim(request.request_id, "bob")
    clock.advance(LEASE)
    world.service.claim(request.request_id, "bob")
    for stale in (
        lambda: world.service.heartbeat(request.request_id, "bob", 1),
        lambda: world.service.publish(request.request_id, "bob", 1, "old"),
        lambda: world.service.heartbeat(request.request_id, "carol", 2),
    ):
        with pytest.raises(StaleGeneration):
            stale()


def test_claim_refusals(database: Database, clock: ManualClock) -> None:
    world = World(database, clock)
    assigned = world.delegate(assignee="carol")
    with pytest.raises(NotFound):
        world.service.claim(assigned.request_id, "mallory")
    with pytest.raises(NotAssignee):
        world.service.claim(assigned.request_id, "bob")
    world.service.claim(assigned.request_id, "carol")
    with pytest.raises(LeaseHeld):
        world.service.claim(assigned.request_id, "carol")
    with pytest.raises(NotFound):
        world.service.claim("wr-missing", "carol")


def test_publish_records_the_result_and_closes_the_lease_once(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    request = world.delegate()
    granted = world.service.claim(request.request_id, "bob")
    clock.advance(LEASE / 2)
    completion = world.service.publish(request.request_id, "bob", granted.generation, "ref-1")
    done = world.service.get_request(request.request_id)
    assert (done.state, done.result_ref, done.lease.closed_at) == (
        "completed",
        "ref-1",
        clock.now(),
    )
    assert completion.completed_at == clock.now()
    clock.advance(LEASE)
    retry = world.service.publish(request.request_id, "bob", granted.generation, "ref-1")
    assert retry == completion
    assert world.service.get_request(request.request_id) == done
    not_the_same = [
        ("bob", granted.generation, "ref-2"),
        ("carol", granted.generation, "ref-1"),
        ("bob", granted.generation + 1, "ref-1"),
    ]
    for holder, generation, result_ref in not_the_same:
        with pytest.raises(AlreadyCompleted):
            world.service.publish(request.request_id, holder, generation, result_ref)
    with pytest.raises(AlreadyCompleted):
        world.service.heartbeat(request.request_id, "bob", granted.generation)
    with pytest.raises(AlreadyCompleted):
        world.service.claim(request.request_id, "carol")
    assert world.service.list_requests("env", "bob") == []


def test_the_claim_winner_is_decided_by_the_database(
    database: Database, clock: ManualClock
) -> None:
    """A claim whose transaction read the request before a rival committed loses at the
    conditional UPDATE, which sees the rival's lease."""
    world = World(database, clock)
    request = world.delegate()
    with database.transaction() as tx:
        assert find_request(tx, request.request_id).lease_holder is None
        with another_service(database, clock) as rival:
            rival.claim(request.request_id, "bob")
        with pytest.raises(LeaseHeld):
            lease.claim(tx, request.request_id, "carol", clock.now(), LEASE)
    assert world.service.get_request(request.request_id).lease.generation == 1


def test_the_fence_refuses_a_completion_whose_lease_moved_on(
    database: Database, clock: ManualClock
) -> None:
    world = World(database, clock)
    request = world.delegate()
    first = world.service.claim(request.request_id, "bob")
    read_at = clock.now()
    with database.transaction() as tx:
        assert find_request(tx, request.request_id).lease_holder == "bob"
        clock.advance(LEASE)
        with another_service(database, clock) as rival:
            rival.claim(request.request_id, "carol")
        with pytest.raises(StaleGeneration):
            lease.fence_completion(tx, request.request_id, "bob", first.generation, "late", read_at)
    assert world.service.get_request(request.request_id).result_ref is None


class StatementsSent:
    """Each statement the store's engines send, with whether its connection commits each
    statement on its own ("autocommit") or inside a BEGIN ... COMMIT ("transaction")."""

    def __init__(self) -> None:
        self._sent: list[tuple[str, str]] = []

    def record(self, connection: Connection, _cursor: object, statement: str, *_: object) -> None:
        dbapi = connection.connection.dbapi_connection
        if isinstance(dbapi, sqlite3.Connection):
            autocommits = dbapi.isolation_level is None
        else:
            autocommits = bool(getattr(dbapi, "autocommit", False))
        mode = "autocommit" if autocommits else "transaction"
        self._sent.append((mode, statement.split(maxsplit=1)[0]))

    def take(self) -> list[tuple[str, str]]:
        taken, self._sent = self._sent, []
        return taken


@contextmanager
def statements_sent(database: Database) -> Iterator[StatementsSent]:
    sent = StatementsSent()
    engines = (database.engine, database.autocommitting_engine)
    for engine in engines:
        event.listen(engine, "before_cursor_execute", sent.record)
    try:
        yield sent
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", sent.record)


def test_each_lease_operation_is_one_statement_and_a_publish_one_transaction_of_two(
    database: Database, clock: ManualClock
) -> None:
    """The lease path's shape, whose cost bench/lease_profile.py measures: a claim and a
    heartbeat are one UPDATE that commits on its own; only a refusal reads, to say why; a
    publish completes and settles in one transaction of two UPDATEs."""
    world = World(database, clock)
    request = world.delegate()
    with statements_sent(database) as sent:
        granted = world.service.claim(request.request_id, "bob")
        assert sent.take() == [("autocommit", "UPDATE")]
        with pytest.raises(LeaseHeld):
            world.service.claim(request.request_id, "carol")
        assert sent.take() == [("autocommit", "UPDATE"), ("autocommit", "SELECT")]
        world.service.heartbeat(request.request_id, "bob", granted.generation)
        assert sent.take() == [("autocommit", "UPDATE")]
        done = world.service.publish(request.request_id, "bob", granted.generation, "done")
        assert sent.take() == [("transaction", "UPDATE"), ("transaction", "UPDATE")]
    assert (done.budget_returned, world.budget().available) == (10, 100)


def test_a_write_that_did_not_happen_is_refused_even_when_nothing_explains_why(
    database: Database, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Statements whose conditions disagree with the Python refusals (a variant's or a
    mutant's may): the request as read explains nothing, and the operation is still refused,
    never answered as if its write had happened."""
    world = World(database, clock)
    request = world.delegate()
    granted = world.service.claim(request.request_id, "bob")
    nowhere = REQUESTS.c.request_id.is_(None)
    monkeypatch.setattr(
        lease,
        "STATEMENTS",
        replace(
            lease.STATEMENTS,
            claim=lease.claim_statement(lambda _expires, _now: true()),
            heartbeat=lease.heartbeat_statement(nowhere),
            completion=lease.completion_statement(nowhere),
        ),
    )
    with pytest.raises(StaleGeneration):
        world.service.heartbeat(request.request_id, "bob", granted.generation)
    with pytest.raises(StaleGeneration):
        world.service.publish(request.request_id, "bob", granted.generation, "done")
    clock.advance(LEASE)
    with pytest.raises(LeaseHeld):
        world.service.claim(request.request_id, "carol")
    stored = world.service.get_request(request.request_id)
    assert (stored.state, stored.lease) == ("open", granted)
