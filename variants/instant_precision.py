"""Variants that store instants to the millisecond, as a DATETIME(3) column would.

The protocol lets an implementation report instants with 0 to 6 fractional digits, and the
spec speaks of persisted instants: an implementation that keeps milliseconds, while its
clock reads microseconds, is legal. Every check must then judge by what it stored and
reports (a run's request instant, a lease's expiry), never by the instant the harness sent.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from conformance.reference.office import run_queue
from conformance.reference.office.models import Run
from conformance.reference.office.wake import Wake
from conformance.reference.workreq import lease
from conformance.reference.workreq.lease import Completion
from conformance.reference.workreq.store import Executor
from conformance.reference.workreq.views import LeaseView
from conformance.variants.variant import Variant

reference_insert = run_queue._insert
reference_claim = lease.claim
reference_heartbeat = lease.heartbeat
reference_fence_completion = lease.fence_completion


def to_milliseconds(instant: datetime) -> datetime:
    return instant.replace(microsecond=instant.microsecond - instant.microsecond % 1000)


def until_in_milliseconds(now: datetime, duration: timedelta) -> timedelta:
    """The duration that makes `now + duration` the millisecond it is stored as."""
    return to_milliseconds(now + duration) - now


def insert_in_milliseconds(session: Session, wake: Wake, now: datetime) -> Run:
    return reference_insert(session, wake, to_milliseconds(now))


def insert_in_whole_seconds(session: Session, wake: Wake, now: datetime) -> Run:
    """The request instant with no fraction at all: the protocol allows 0 to 6 digits."""
    return reference_insert(session, wake, now.replace(microsecond=0))


def claim_in_milliseconds(
    tx: Executor, request_id: str, holder: str, now: datetime, duration: timedelta
) -> LeaseView:
    return reference_claim(tx, request_id, holder, now, until_in_milliseconds(now, duration))


def heartbeat_in_milliseconds(
    tx: Executor,
    request_id: str,
    holder: str,
    generation: int,
    now: datetime,
    duration: timedelta,
) -> LeaseView:
    until = until_in_milliseconds(now, duration)
    return reference_heartbeat(tx, request_id, holder, generation, now, until)


def complete_in_milliseconds(
    tx: Executor,
    request_id: str,
    holder: str,
    generation: int,
    result_ref: str,
    now: datetime,
) -> Completion:
    """Records the completion instant to the millisecond. Expiries are whole milliseconds too,
    so the fence judges the cut instant exactly as it would the clock's own."""
    return reference_fence_completion(
        tx, request_id, holder, generation, result_ref, to_milliseconds(now)
    )


VARIANTS = [
    Variant(
        "millisecond_run_instants",
        Capability.OFFICE,
        "stores each run's request instant to the millisecond",
        lambda: [Patch(run_queue, "_insert", insert_in_milliseconds)],
    ),
    Variant(
        "whole_second_run_instants",
        Capability.OFFICE,
        "stores each run's request instant to the whole second",
        lambda: [Patch(run_queue, "_insert", insert_in_whole_seconds)],
    ),
    Variant(
        "millisecond_lease_instants",
        Capability.WORK_REQUESTS,
        "stores lease expiries and completion instants to the millisecond",
        lambda: [
            Patch(lease, "claim", claim_in_milliseconds),
            Patch(lease, "heartbeat", heartbeat_in_milliseconds),
            Patch(lease, "fence_completion", complete_in_milliseconds),
        ],
    ),
]
