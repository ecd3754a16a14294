"""Work-request variants that read an open question otherwise, one alternative each.

Each takes one alternative reading the register lists (`readings`): undeclared, its run
must come out `diverged` on that question's criteria alone; declaring it in the handshake
(its `_declared` twin), it must pass outright, judged by its own reading.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy import update

from conformance.adapters.patched import Capability, Patch
from conformance.reference import app
from conformance.reference.errors import AlreadyCompleted, Forbidden, InvalidInput, NotFound
from conformance.reference.workreq import budget_ledger, lease, service, views
from conformance.reference.workreq.budget_ledger import (
    _GIVE_BACK_TO_CAMPAIGN,
    _GIVE_BACK_TO_REQUEST,
)
from conformance.reference.workreq.lease import Completion, StoredLease, read_lease
from conformance.reference.workreq.models import (
    Campaign,
    Environment,
    State,
    StoredRequest,
    WorkRequestRecord,
)
from conformance.reference.workreq.service import WorkRequestService
from conformance.reference.workreq.store import Executor, conditional_update, find_session
from conformance.reference.workreq.views import CompletionView, LeaseView
from conformance.variants.variant import Variant

reference_fence_completion = lease.fence_completion
reference_refuse_claim = lease.refuse_claim

# --------------------------------------------------------------------------
# The lease
# --------------------------------------------------------------------------


def stored_state(record: StoredRequest, now: datetime) -> State:
    """The state as stored: in progress from a claim until the next claim or the completion."""
    return State(record.state)


def refuse_unentitled_as_forbidden(stored: StoredLease, holder: str, now: datetime) -> None:
    """Anyone the request is not for is refused as forbidden, outsider or not the assignee."""
    if not stored.claimant_is_member or stored.assignee not in (None, holder):
        raise Forbidden(f"{holder!r} may not claim {stored.request_id!r}")
    reference_refuse_claim(stored, holder, now)


def heartbeat_renewing_expired(
    tx: Executor,
    request_id: str,
    holder: str,
    generation: int,
    now: datetime,
    duration: timedelta,
) -> LeaseView:
    """The current pair renews its lease even after it expired, while nobody claimed since."""
    stored = read_lease(tx, request_id, holder)
    lease.refuse_outsider(stored, holder)
    current = (stored.holder, stored.generation) == (holder, generation)
    if stored.state == State.COMPLETED or not current:
        lease.refuse_unless_current(stored, holder, generation, now)
    renewed = conditional_update(
        tx,
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == request_id)
        .where(WorkRequestRecord.state != State.COMPLETED)
        .where(WorkRequestRecord.lease_holder == holder)
        .where(WorkRequestRecord.lease_generation == generation)
        .values(lease_expires_at=now + duration, state=State.IN_PROGRESS),
    )
    if not renewed:
        # A completion or a claim came between the read and the write: refused as either.
        lease.refuse_unless_current(read_lease(tx, request_id, holder), holder, generation, now)
        raise AlreadyCompleted(f"work request {request_id!r} changed while it was renewed")
    return LeaseView(holder, generation, now + duration, closed_at=None)


# --------------------------------------------------------------------------
# Completion and budget
# --------------------------------------------------------------------------


def complete_forfeiting(
    tx: Executor,
    request_id: str,
    holder: str,
    generation: int,
    result_ref: str,
    now: datetime,
) -> Completion:
    """Completes, and the unspent slice is forfeited: recorded as nothing returned."""
    completed = reference_fence_completion(tx, request_id, holder, generation, result_ref, now)
    tx.execute(
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == request_id)
        .values(returned=0)
    )
    return replace(completed, view=replace(completed.view, budget_returned=0))


def settle_past_completed_parent_to_campaign(tx: Executor, completion: Completion) -> None:
    """The remainder goes back to the originator's request while it is open; once that has
    completed, straight to the campaign, never to an ancestor further up."""
    amount = completion.view.budget_returned
    parent = completion.parent_request_id
    if not amount:
        return
    if parent is not None and conditional_update(
        tx, _GIVE_BACK_TO_REQUEST, {"ancestor": parent, "amount": amount}
    ):
        return
    tx.execute(_GIVE_BACK_TO_CAMPAIGN, {"campaign": completion.campaign_id, "amount": amount})


def return_to_the_originating_request(
    tx: Executor, campaign_id: str, parent_request_id: str | None, amount: int
) -> None:
    """Gives the remainder to the originating request even when that one has completed, where
    nothing can spend it any more: lost, not created (the text forbids only creating it)."""
    if parent_request_id is None:
        tx.execute(
            update(Campaign)
            .where(Campaign.campaign_id == campaign_id)
            .values(available=Campaign.available + amount)
        )
        return
    tx.execute(
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == parent_request_id)
        .values(carved=WorkRequestRecord.carved - amount)
    )


def refused_retry(
    recorded: CompletionView, holder: str, generation: int, result_ref: str
) -> CompletionView:
    raise AlreadyCompleted(f"work request {recorded.request_id!r} is completed")


class RootUsageRefusedService(WorkRequestService):
    """A root session records no usage of its own."""

    def record_usage(self, session_id: str, amount: int) -> None:
        with self._db.transaction() as tx:
            if find_session(tx, session_id).request_id is None:
                raise InvalidInput("a root session records no usage of its own")
        super().record_usage(session_id, amount)


class DistinctListingRefusalService(WorkRequestService):
    """An environment that does not exist is refused as not found, a non-member as forbidden."""

    def list_requests(self, environment_id: str, principal: str) -> list[views.RequestView]:
        try:
            return super().list_requests(environment_id, principal)
        except NotFound:
            if self._environment_exists(environment_id):
                raise Forbidden(f"{principal!r} is not a member of {environment_id!r}") from None
            raise

    def _environment_exists(self, environment_id: str) -> bool:
        with self._db.transaction() as tx:
            return tx.get(Environment, environment_id) is not None


VARIANTS = [
    Variant(
        "in_progress_until_reclaimed",
        Capability.WORK_REQUESTS,
        "a request whose lease expired reads in_progress until it is claimed again",
        lambda: [Patch(views, "reported_state", stored_state)],
        readings={"WR-20": "in-progress-until-claimed"},
    ),
    Variant(
        "unentitled_claim_forbidden",
        Capability.WORK_REQUESTS,
        "a claim by an outsider or by someone other than the assignee is refused as forbidden",
        lambda: [Patch(lease, "refuse_claim", refuse_unentitled_as_forbidden)],
        readings={"WR-6": "outsider-forbidden"},
    ),
    Variant(
        "late_heartbeat_renews",
        Capability.WORK_REQUESTS,
        "the current holder's heartbeat renews its lease after it expired, until someone claims",
        lambda: [Patch(lease, "heartbeat", heartbeat_renewing_expired)],
        readings={"WR-19": "renews-expired"},
    ),
    Variant(
        "unspent_slice_forfeited",
        Capability.WORK_REQUESTS,
        "a completed request's unspent slice is forfeited, returned to nobody",
        lambda: [
            Patch(lease, "fence_completion", complete_forfeiting),
            Patch(budget_ledger, "settle", lambda tx, completion: None),
        ],
        readings={"WR-3": "forfeit"},
    ),
    Variant(
        "remainder_to_campaign",
        Capability.WORK_REQUESTS,
        "past a completed originating request, the unspent slice goes straight to the campaign",
        lambda: [Patch(budget_ledger, "settle", settle_past_completed_parent_to_campaign)],
        readings={"WR-15": "to-campaign"},
    ),
    Variant(
        "remainder_lost_past_completed_parent",
        Capability.WORK_REQUESTS,
        "gives a remainder to its originating request even when that one has completed",
        lambda: [Patch(budget_ledger, "_return_upwards", return_to_the_originating_request)],
        readings={"WR-15": "lost-past-completed"},
    ),
    Variant(
        "exact_retry_refused",
        Capability.WORK_REQUESTS,
        "an exact retry of a recorded completion is refused as already completed",
        lambda: [Patch(service, "_retry_answer", refused_retry)],
        readings={"WR-10": "retry-refused"},
    ),
    Variant(
        "root_usage_refused",
        Capability.WORK_REQUESTS,
        "a root session cannot record usage of its own",
        lambda: [Patch(app, "WorkRequestService", RootUsageRefusedService)],
        readings={"WR-14": "root-usage-refused"},
    ),
    Variant(
        "listing_refusals_differ",
        Capability.WORK_REQUESTS,
        "a non-member's listing is refused as forbidden, an unknown environment's as not found",
        lambda: [Patch(app, "WorkRequestService", DistinctListingRefusalService)],
        readings={"WR-11": "distinct-refusal"},
    ),
]
