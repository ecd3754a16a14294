"""Mutants of the generation-fenced lease: expiry, the completion fence, generations, heartbeats."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, bindparam, update

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference.errors import LeaseHeld
from conformance.reference.workreq import lease
from conformance.reference.workreq import service as workreq_service
from conformance.reference.workreq.lease import LeaseStatements, LiveRule
from conformance.reference.workreq.lease import claim as reference_claim
from conformance.reference.workreq.lease import heartbeat as reference_heartbeat
from conformance.reference.workreq.lease import refuse_claim as reference_refuse_claim
from conformance.reference.workreq.models import REQUESTS, State, WorkRequestRecord
from conformance.reference.workreq.service import is_exact_retry
from conformance.reference.workreq.store import Executor
from conformance.reference.workreq.views import CompletionView, LeaseView


def holds_lease_on_any_request(live: LiveRule) -> ColumnElement[bool]:
    """The fence forgets which request it guards: (holder, generation) matches every request
    that holder holds at that generation."""
    columns = REQUESTS.c
    return (
        (
            (columns.request_id == bindparam("request"))
            | (columns.lease_holder == bindparam("holder"))
        )
        & (columns.lease_generation == bindparam("generation"))
        & (columns.state == State.IN_PROGRESS.value)
        & live(columns.lease_expires_at, lease.instant("now"))
    )


def refuse_claim_ignoring_assignee(stored: lease.StoredLease, holder: str, now: datetime) -> None:
    """Refuses outsiders, completed requests and live leases, but lets any member claim a
    request assigned to someone else."""
    reference_refuse_claim(replace(stored, assignee=None), holder, now)


def claim_refused_while_in_progress(
    tx: Executor, request_id: str, holder: str, now: datetime, duration: timedelta
) -> LeaseView:
    """Judges a claim by the stored state: an in-progress request stays held even once expired."""
    stored = lease.read_lease(tx, request_id, holder)
    lease.refuse_claim(stored, holder, now)
    if stored.state == State.IN_PROGRESS:
        raise LeaseHeld(f"work request {request_id!r} is in progress")
    return reference_claim(tx, request_id, holder, now, duration)


def state_guarded_completion() -> LeaseStatements:
    """Completes any request that is not completed yet: no holder, generation or expiry fence."""
    unfenced = (REQUESTS.c.request_id == bindparam("request")) & (
        REQUESTS.c.state != State.COMPLETED.value
    )
    return replace(lease.STATEMENTS, completion=lease.completion_statement(unfenced))


def live_through_expiry(
    expires_at: ColumnElement[datetime | None], now: ColumnElement[datetime]
) -> ColumnElement[bool]:
    """A lease still live at its very expiry instant (WR-8's other reading), for one operation
    of three while the other two keep the reference's."""
    return expires_at >= now


def claim_held_at_expiry() -> LeaseStatements:
    """The claim reads a lease live at its expiry instant; heartbeat and publish, expired."""
    return replace(lease.STATEMENTS, claim=lease.claim_statement(live_through_expiry))


def publish_live_at_expiry() -> LeaseStatements:
    """The completion fence reads a lease live at its expiry instant; claim and heartbeat,
    expired."""
    fence = lease.holds_live_lease(live_through_expiry)
    return replace(lease.STATEMENTS, completion=lease.completion_statement(fence))


def retry_matched_folded(
    recorded: CompletionView, holder: str, generation: int, result_ref: str
) -> bool:
    """Takes a publish for an exact retry when its result differs only in case or trailing
    spaces, as a case-insensitive collation compares them: another result is answered as done."""
    return is_exact_retry(recorded, holder, generation, result_ref) or (
        (recorded.holder, recorded.generation) == (holder, generation)
        and recorded.result_ref.rstrip(" ").lower() == result_ref.rstrip(" ").lower()
    )


def claim_keeping_holder_generation(
    tx: Executor, request_id: str, holder: str, now: datetime, duration: timedelta
) -> LeaseView:
    """Moves the generation only when the holder changes, as a leader-election lease does."""
    before = lease.read_lease(tx, request_id, holder)
    claimed = reference_claim(tx, request_id, holder, now, duration)
    if before.holder != holder:
        return claimed
    _set_generation(tx, request_id, before.generation)
    return replace(claimed, generation=before.generation)


def heartbeat_by_holder_only(
    tx: Executor,
    request_id: str,
    holder: str,
    generation: int,
    now: datetime,
    duration: timedelta,
) -> LeaseView:
    """Checks who sends the heartbeat but not which generation it carries."""
    stored = lease.read_lease(tx, request_id, holder)
    if stored.holder == holder:
        generation = stored.generation
    return reference_heartbeat(tx, request_id, holder, generation, now, duration)


def _set_generation(tx: Executor, request_id: str, generation: int) -> None:
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
        lambda: [Patch(lease, "claim", claim_refused_while_in_progress)],
    ),
    Mutant(
        "claim_held_at_expiry_instant",
        "AC-ARMONIA-WORKREQ-001.4",
        Capability.WORK_REQUESTS,
        "the claim takes a lease for live at its expiry instant, the heartbeat for expired: "
        "there, neither the holder nor anyone else may act",
        lambda: [Patch(lease, "STATEMENTS", claim_held_at_expiry())],
    ),
    Mutant(
        "publish_at_expiry_instant",
        "AC-ARMONIA-WORKREQ-001.4",
        Capability.WORK_REQUESTS,
        "the completion fence takes a lease for live at its expiry instant, the heartbeat for "
        "expired: a holder told its lease expired still publishes there",
        lambda: [Patch(lease, "STATEMENTS", publish_live_at_expiry())],
    ),
    Mutant(
        "assignee_ignored_under_forbidden_reading",
        "AC-ARMONIA-WORKREQ-001.4",
        Capability.WORK_REQUESTS,
        "declares claims by the unentitled refused as forbidden (WR-6), yet lets any member "
        "claim a request assigned to someone else",
        lambda: [Patch(lease, "refuse_claim", refuse_claim_ignoring_assignee)],
        readings={"WR-6": "outsider-forbidden"},
    ),
    Mutant(
        "lease_without_fence",
        "AC-ARMONIA-WORKREQ-001.7",
        Capability.WORK_REQUESTS,
        "guards completion by state only: any holder, at any generation, even expired, completes",
        lambda: [Patch(lease, "STATEMENTS", state_guarded_completion())],
    ),
    Mutant(
        "fence_ignores_request",
        "AC-ARMONIA-WORKREQ-001.7",
        Capability.WORK_REQUESTS,
        "the lease fence matches holder and generation on any request, so one publish completes "
        "every request the holder holds at that generation",
        lambda: [
            Patch(lease, "STATEMENTS", LeaseStatements.built(fence=holds_lease_on_any_request))
        ],
    ),
    Mutant(
        "generation_kept_for_same_holder",
        "AC-ARMONIA-WORKREQ-001.7",
        Capability.WORK_REQUESTS,
        "a holder reclaiming its own expired lease keeps its old generation",
        lambda: [Patch(lease, "claim", claim_keeping_holder_generation)],
    ),
    Mutant(
        "retry_matched_ignoring_case",
        "AC-ARMONIA-WORKREQ-001.6",
        Capability.WORK_REQUESTS,
        "takes a publish of a completed request whose result differs only in case for an exact "
        "retry, and answers it as done instead of refusing it",
        lambda: [Patch(workreq_service, "is_exact_retry", retry_matched_folded)],
    ),
    Mutant(
        "heartbeat_ignores_generation",
        "AC-ARMONIA-WORKREQ-001.12",
        Capability.WORK_REQUESTS,
        "a heartbeat from the current holder is accepted whatever generation it carries",
        lambda: [Patch(lease, "heartbeat", heartbeat_by_holder_only)],
    ),
]
