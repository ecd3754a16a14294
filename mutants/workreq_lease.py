"""Mutants of the generation-fenced lease: expiry, the completion fence, generations, heartbeats."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, update
from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from mutants.mutant import Mutant
from reference.errors import AlreadyCompleted, LeaseHeld
from reference.workreq import lease
from reference.workreq.lease import _refuse_claim as reference_refuse_claim
from reference.workreq.lease import claim as reference_claim
from reference.workreq.lease import heartbeat as reference_heartbeat
from reference.workreq.models import State, WorkRequestRecord
from reference.workreq.store import conditional_update, find_request


def holds_lease_on_any_request(
    record: WorkRequestRecord, holder: str, generation: int, now: datetime
) -> ColumnElement[bool]:
    """The fence forgets which request it guards: (holder, generation) matches every request
    that holder holds at that generation."""
    return (
        (
            (WorkRequestRecord.request_id == record.request_id)
            | (WorkRequestRecord.lease_holder == holder)
        )
        & (WorkRequestRecord.lease_generation == generation)
        & (WorkRequestRecord.state == State.IN_PROGRESS)
        & (WorkRequestRecord.lease_expires_at > now)
    )


def refuse_claim_while_in_progress(record: WorkRequestRecord, holder: str, now: datetime) -> None:
    """Judges a claim by the stored state: an in-progress request stays held even once expired."""
    reference_refuse_claim(record, holder, now)
    if record.state == State.IN_PROGRESS:
        raise LeaseHeld(f"work request {record.request_id!r} is in progress")


def state_guarded_completion(
    tx: Session,
    record: WorkRequestRecord,
    holder: str,
    generation: int,
    result_ref: str,
    now: datetime,
) -> WorkRequestRecord:
    """Completes any request that is not completed yet: no holder, generation or expiry fence."""
    if record.state == State.COMPLETED:
        raise AlreadyCompleted(f"work request {record.request_id!r} is completed")
    conditional_update(
        tx,
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == record.request_id)
        .where(WorkRequestRecord.state != State.COMPLETED)
        .values(
            state=State.COMPLETED, result_ref=result_ref, lease_closed_at=now, completed_at=now
        ),
    )
    return find_request(tx, record.request_id)


def claim_keeping_holder_generation(
    tx: Session, record: WorkRequestRecord, holder: str, now: datetime, duration: timedelta
) -> WorkRequestRecord:
    """Moves the generation only when the holder changes, as a leader-election lease does."""
    previous_holder, previous_generation = record.lease_holder, record.lease_generation
    claimed = reference_claim(tx, record, holder, now, duration)
    if previous_holder != holder:
        return claimed
    _set_generation(tx, record.request_id, previous_generation)
    return find_request(tx, record.request_id)


def heartbeat_by_holder_only(
    tx: Session,
    record: WorkRequestRecord,
    holder: str,
    generation: int,
    now: datetime,
    duration: timedelta,
) -> WorkRequestRecord:
    """Checks who sends the heartbeat but not which generation it carries."""
    if record.lease_holder == holder:
        generation = record.lease_generation
    return reference_heartbeat(tx, record, holder, generation, now, duration)


def _set_generation(tx: Session, request_id: str, generation: int) -> None:
    tx.execute(
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == request_id)
        .values(lease_generation=generation)
    )


MUTANTS = [
    Mutant(
        "expired_lease_not_reclaimable",
        "AC-ARMONIA-WORKREQ-001.4",
        Capability.WORK_REQUESTS,
        "refuses a claim on any in-progress request, so an expired lease blocks reclaiming",
        lambda: [Patch(lease, "_refuse_claim", refuse_claim_while_in_progress)],
    ),
    Mutant(
        "lease_without_fence",
        "AC-ARMONIA-WORKREQ-001.7",
        Capability.WORK_REQUESTS,
        "guards completion by state only: any holder, at any generation, even expired, completes",
        lambda: [Patch(lease, "fence_completion", state_guarded_completion)],
    ),
    Mutant(
        "fence_ignores_request",
        "AC-ARMONIA-WORKREQ-001.7",
        Capability.WORK_REQUESTS,
        "the lease fence matches holder and generation on any request, so one publish completes "
        "every request the holder holds at that generation",
        lambda: [Patch(lease, "_holds_live_lease", holds_lease_on_any_request)],
    ),
    Mutant(
        "generation_kept_for_same_holder",
        "AC-ARMONIA-WORKREQ-001.7",
        Capability.WORK_REQUESTS,
        "a holder reclaiming its own expired lease keeps its old generation",
        lambda: [Patch(lease, "claim", claim_keeping_holder_generation)],
    ),
    Mutant(
        "heartbeat_ignores_generation",
        "AC-ARMONIA-WORKREQ-001.12",
        Capability.WORK_REQUESTS,
        "a heartbeat from the current holder is accepted whatever generation it carries",
        lambda: [Patch(lease, "heartbeat", heartbeat_by_holder_only)],
    ),
]
