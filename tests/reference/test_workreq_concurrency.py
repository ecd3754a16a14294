"""Concurrent claims of one request, each through its own coordinator on one store.

No two threads share a service, an engine or a lock: only the database can pick
the winner, as it must across processes.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from conformance.reference.clock import ManualClock
from conformance.reference.db import Database
from conformance.reference.errors import DomainError, LeaseHeld
from conformance.reference.workreq.views import LeaseView
from tests.reference.workreq_world import MEMBERS, World, another_service


def test_concurrent_claims_have_exactly_one_winner(database: Database, clock: ManualClock) -> None:
    world = World(database, clock)
    request = world.delegate()
    start = threading.Barrier(len(MEMBERS))

    def claim_as(holder: str) -> LeaseView | DomainError:
        with another_service(database, clock) as service:
            service.get_request(request.request_id)  # connect before the race starts
            start.wait(timeout=30)
            try:
                return service.claim(request.request_id, holder)
            except DomainError as refusal:
                return refusal

    with ThreadPoolExecutor(max_workers=len(MEMBERS)) as pool:
        outcomes = list(pool.map(claim_as, MEMBERS))

    winners = [outcome for outcome in outcomes if isinstance(outcome, LeaseView)]
    losers = [outcome for outcome in outcomes if not isinstance(outcome, LeaseView)]
    assert len(winners) == 1, outcomes
    assert all(isinstance(loser, LeaseHeld) for loser in losers), losers
    stored = world.service.get_request(request.request_id)
    assert (stored.lease.holder, stored.lease.generation) == (winners[0].holder, 1)
