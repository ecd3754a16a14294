"""Work-request variants in what the spec leaves open.

Listing order, which refusal wins when several apply, refusing or narrowing an
over-wide grant, how generations are numbered (per request or one global
fencing token), what a live holder's second claim gets, how a heartbeat extends
the lease: the spec fixes none of them, so these must pass. The last ones read
a registered interpretation otherwise and must only diverge on it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.orm import Session

from conformance.adapters.edits import edited
from conformance.adapters.patched import Capability, Patch
from conformance.driver import Permissions
from conformance.oracle.grants import folded_within
from conformance.reference import app
from conformance.reference.db import Database
from conformance.reference.errors import (
    AlreadyCompleted,
    CountCap,
    InsufficientBudget,
    UsageExceedsSlice,
)
from conformance.reference.workreq import budget_ledger, delegation, lease, liveness, service
from conformance.reference.workreq.budget_ledger import (
    _GIVE_BACK_TO_CAMPAIGN,
    _draw_from_campaign,
    reserve_slice,
)
from conformance.reference.workreq.delegation import DelegationOrder
from conformance.reference.workreq.lease import LeaseStatements, refuse_unless_current
from conformance.reference.workreq.lease import claim as reference_claim
from conformance.reference.workreq.lease import heartbeat as reference_heartbeat
from conformance.reference.workreq.models import (
    Campaign,
    DelegationSession,
    State,
    WorkRequestRecord,
)
from conformance.reference.workreq.permissions import PermissionSet, ensure_narrowing
from conformance.reference.workreq.service import WorkRequestService
from conformance.reference.workreq.settings import WorkRequestSettings
from conformance.reference.workreq.store import (
    Executor,
    find_campaign,
    find_request,
    find_session,
)
from conformance.reference.workreq.views import LeaseView, RequestView
from conformance.variants.variant import Variant

reference_delegate = delegation.delegate
reference_take_child_slot = delegation._take_child_slot
reference_charge_usage = budget_ledger.charge_usage

# --------------------------------------------------------------------------
# Listing
# --------------------------------------------------------------------------


class NewestFirstService(WorkRequestService):
    """Lists the newest request first."""

    def list_requests(self, environment_id: str, principal: str) -> list[RequestView]:
        return list(reversed(super().list_requests(environment_id, principal)))


class FreeUsageService(WorkRequestService):
    """Takes usage of 0 as nothing to charge, and accepts it (reads WR-24 otherwise)."""

    def record_usage(self, session_id: str, amount: int) -> None:
        if amount == 0:
            with self._db.transaction() as tx:
                find_session(tx, session_id)
            return
        super().record_usage(session_id, amount)


def charge_within_slice(tx: Session, session: DelegationSession, amount: int) -> None:
    """Usage beyond what is left of the slice is charged up to the slice and accepted.

    Capped against what the charge itself finds left: a rival usage committed between the read
    and the charge makes the charge find too little, and the usage is capped again against the
    new remainder (the failed conditional update has seen it), never refused. Capped once
    against a stale read, usages made at once were refused while room was left, and what they
    charged together depended on their timing.
    """
    if session.request_id is None:
        reference_charge_usage(tx, session, amount)
        return
    while True:
        record = find_request(tx, session.request_id)
        capped = amount if record.state == State.COMPLETED else min(amount, record.remaining)
        if capped == 0:
            return
        try:
            reference_charge_usage(tx, session, capped)
            return
        except UsageExceedsSlice:
            continue


class SlotFirstService(WorkRequestService):
    """Takes the count-cap slot in a transaction of its own before checking anything else, so a
    refused delegation keeps the slot it took (reads WR-4 otherwise)."""

    def delegate(self, kind: str, originating_session_id: str, **order: Any) -> RequestView:
        with self._db.transaction() as tx:
            originator = find_session(tx, originating_session_id)
            reference_take_child_slot(tx, originator, self._settings)
        return super().delegate(kind, originating_session_id, **order)


# --------------------------------------------------------------------------
# Delegation
# --------------------------------------------------------------------------


def delegate_budget_first(
    tx: Session, order: DelegationOrder, settings: WorkRequestSettings, now: datetime
) -> WorkRequestRecord:
    """Asks whether the slice is affordable before whether the grant narrows."""
    originator = find_session(tx, order.originating_session_id)
    affordable = (
        find_campaign(tx, originator.campaign_id).available
        if originator.request_id is None
        else find_request(tx, originator.request_id).remaining
    )
    if order.budget_slice > affordable:
        raise InsufficientBudget(f"slice {order.budget_slice} exceeds the {affordable} available")
    return reference_delegate(tx, order, settings, now)


def delegate_narrowed(
    tx: Session, order: DelegationOrder, settings: WorkRequestSettings, now: datetime
) -> WorkRequestRecord:
    """Grants what was asked, narrowed to what the originator holds, instead of refusing."""
    originator = find_session(tx, order.originating_session_id)
    held = PermissionSet.from_lists(originator.tools, originator.devices)
    narrowed = PermissionSet(
        order.permissions.tools & held.tools, order.permissions.devices & held.devices
    )
    ensure_narrowing(narrowed, held)
    return reference_delegate(tx, replace(order, permissions=narrowed), settings, now)


def ensure_folded_narrowing(requested: PermissionSet, held: PermissionSet) -> None:
    """Compares grant names as a case-insensitive, space-padding collation does: "Shell" is the
    held "shell" (reads WR-25 otherwise)."""
    as_permissions = [
        Permissions(tools=names.tools, devices=names.devices) for names in (requested, held)
    ]
    if not folded_within(*as_permissions):
        ensure_narrowing(requested, held)


def take_slot_in_campaign(
    tx: Session, originator: DelegationSession, settings: WorkRequestSettings
) -> None:
    """One count cap for the whole campaign: its delegated sessions, whoever made them. The
    campaign's row is written first, so that delegations made at once count one after
    another: a count read before any write lets them all find the cap unreached (found by
    the race of twenty delegations, which admitted ten under a cap of four)."""
    tx.execute(
        update(Campaign)
        .where(Campaign.campaign_id == originator.campaign_id)
        .values(total=Campaign.total)
    )
    made = tx.scalar(
        select(func.count())
        .select_from(DelegationSession)
        .where(DelegationSession.campaign_id == originator.campaign_id)
        .where(DelegationSession.request_id.is_not(None))
    )
    if (made or 0) >= settings.max_children_per_session:
        raise CountCap(f"campaign {originator.campaign_id!r} has used its count cap")


def reserve_from_campaign(tx: Session, originator: DelegationSession, amount: int) -> None:
    """Takes every slice out of the campaign, nested ones included (reads WR-1 otherwise); a
    completed request's child session still delegates nothing, as in the reference."""
    if originator.request_id is None:
        reserve_slice(tx, originator, amount)
        return
    if find_request(tx, originator.request_id).state == State.COMPLETED:
        raise AlreadyCompleted(f"request {originator.request_id!r} has completed")
    if not _draw_from_campaign(tx, originator.campaign_id, amount, spend=False):
        raise InsufficientBudget(f"slice {amount} exceeds the campaign's available budget")


def return_to_campaign(
    tx: Executor, campaign_id: str, parent_request_id: str | None, amount: int
) -> None:
    """Every slice came out of the campaign, so what one leaves goes back there: given to the
    parent request, it would let that one spend beyond its own slice (001.13)."""
    tx.execute(_GIVE_BACK_TO_CAMPAIGN, {"campaign": campaign_id, "amount": amount})


def any_assignee(tx: Session, campaign: object, assignee: str | None) -> None:
    """Takes any principal as an assignee (reads WR-23 otherwise)."""


# --------------------------------------------------------------------------
# The lease
# --------------------------------------------------------------------------


def claim_with_global_token(
    tx: Executor, request_id: str, holder: str, now: datetime, duration: timedelta
) -> LeaseView:
    """Each grant gets a fencing token above every token ever issued, on any request."""
    claimed = reference_claim(tx, request_id, holder, now, duration)
    highest = tx.scalar(select(func.max(WorkRequestRecord.lease_generation))) or 0
    token = max(highest, claimed.generation) + 1
    _set_generation(tx, request_id, token)
    return replace(claimed, generation=token)


def claim_or_keep(
    tx: Executor, request_id: str, holder: str, now: datetime, duration: timedelta
) -> LeaseView:
    """A live holder's second claim answers its own lease, unchanged."""
    stored = lease.read_lease(tx, request_id, holder)
    own = (
        stored.state == State.IN_PROGRESS
        and stored.holder == holder
        and liveness.is_live(stored.expires_at, now)
    )
    if not own:
        return reference_claim(tx, request_id, holder, now, duration)
    lease.refuse_outsider(stored, holder)
    return LeaseView(holder, stored.generation, stored.expires_at, closed_at=None)


def heartbeat_from_old_expiry(
    tx: Executor,
    request_id: str,
    holder: str,
    generation: int,
    now: datetime,
    duration: timedelta,
) -> LeaseView:
    """Extends the lease by one duration from where it was due, not from now."""
    stored = lease.read_lease(tx, request_id, holder)
    refuse_unless_current(stored, holder, generation, now)
    due = (stored.expires_at or now) + duration
    tx.execute(
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == request_id)
        .values(lease_expires_at=due)
    )
    return LeaseView(holder, generation, due, closed_at=None)


def heartbeat_bumping_generation(
    tx: Executor,
    request_id: str,
    holder: str,
    generation: int,
    now: datetime,
    duration: timedelta,
) -> LeaseView:
    """Renews the lease as a fresh grant with the next generation (reads WR-7 otherwise)."""
    renewed = reference_heartbeat(tx, request_id, holder, generation, now, duration)
    _set_generation(tx, request_id, renewed.generation + 1)
    return replace(renewed, generation=renewed.generation + 1)


def _set_generation(tx: Executor, request_id: str, generation: int) -> None:
    tx.execute(
        update(WorkRequestRecord)
        .where(WorkRequestRecord.request_id == request_id)
        .values(lease_generation=generation)
    )


def live_through_expiry(expires_at: datetime | None, now: datetime) -> bool:
    """Expired only once the clock is past the expiry (reads WR-8 otherwise)."""
    return expires_at is not None and now <= expires_at


def live_through_expiry_in_sql(
    expires_at: ColumnElement[Any], now: ColumnElement[Any]
) -> ColumnElement[bool]:
    return expires_at >= now


WRITES_TWICE = Patch(Database, "statements", Database.statement_transaction)
"""For a lease operation that writes twice: its statements run in one transaction, not each on
its own as the reference's single-statement claims and heartbeats do."""


VARIANTS = [
    Variant(
        "newest_first_listing",
        Capability.WORK_REQUESTS,
        "lists the newest request first",
        lambda: [Patch(app, "WorkRequestService", NewestFirstService)],
    ),
    Variant(
        "budget_checked_before_permissions",
        Capability.WORK_REQUESTS,
        "refuses for budget before it looks at permissions when both apply",
        lambda: [Patch(service, "delegate_request", delegate_budget_first)],
    ),
    Variant(
        "narrowed_permissions",
        Capability.WORK_REQUESTS,
        "narrows an over-wide grant to what the originator holds instead of refusing it",
        lambda: [Patch(service, "delegate_request", delegate_narrowed)],
    ),
    Variant(
        "global_fencing_token",
        Capability.WORK_REQUESTS,
        "numbers leases with one fencing token rising across all requests",
        lambda: [Patch(lease, "claim", claim_with_global_token), WRITES_TWICE],
        readings={"WR-7": "newer-not-next"},
    ),
    Variant(
        "idempotent_reclaim",
        Capability.WORK_REQUESTS,
        "a live holder claiming again gets its own lease back",
        lambda: [Patch(lease, "claim", claim_or_keep)],
    ),
    Variant(
        "renewal_from_old_expiry",
        Capability.WORK_REQUESTS,
        "a heartbeat extends the lease by one duration from its old expiry",
        lambda: [Patch(lease, "heartbeat", heartbeat_from_old_expiry)],
    ),
    Variant(
        "lease_live_at_expiry",
        Capability.WORK_REQUESTS,
        "a lease is still live at its expiry instant, expired only after it",
        lambda: [
            Patch(liveness, "is_live", live_through_expiry),
            Patch(lease, "STATEMENTS", LeaseStatements.built(live=live_through_expiry_in_sql)),
        ],
        readings={"WR-8": "inclusive-expiry"},
    ),
    Variant(
        "heartbeat_bumps_generation",
        Capability.WORK_REQUESTS,
        "each heartbeat renews the lease under the next generation",
        lambda: [Patch(lease, "heartbeat", heartbeat_bumping_generation), WRITES_TWICE],
        readings={"WR-7": "heartbeat-regenerates"},
    ),
    Variant(
        "listing_includes_completed",
        Capability.WORK_REQUESTS,
        "lists completed requests beside the open and in-progress ones",
        lambda: [
            edited(
                WorkRequestService,
                "list_requests",
                ".where(WorkRequestRecord.state != State.COMPLETED)",
                "",
            )
        ],
        readings={"WR-17": "completed-listed"},
    ),
    Variant(
        "nested_slice_from_campaign",
        Capability.WORK_REQUESTS,
        "takes nested slices from the campaign, not the child's remainder, and returns them there",
        lambda: [
            Patch(delegation, "reserve_slice", reserve_from_campaign),
            Patch(budget_ledger, "_return_upwards", return_to_campaign),
        ],
        readings={"WR-1": "from-campaign"},
    ),
    Variant(
        "zero_usage_accepted",
        Capability.WORK_REQUESTS,
        "accepts usage of 0 as nothing to charge",
        lambda: [Patch(app, "WorkRequestService", FreeUsageService)],
        readings={"WR-24": "zero-usage-accepted"},
    ),
    Variant(
        "usage_capped_at_slice",
        Capability.WORK_REQUESTS,
        "charges usage beyond what is left of the slice only up to the slice, and accepts it",
        lambda: [Patch(budget_ledger, "charge_usage", charge_within_slice)],
        readings={"WR-2": "capped-usage"},
    ),
    Variant(
        "refused_delegation_keeps_its_slot",
        Capability.WORK_REQUESTS,
        "takes the count-cap slot before any other check, and keeps it when refused",
        lambda: [
            Patch(app, "WorkRequestService", SlotFirstService),
            Patch(delegation, "_take_child_slot", lambda *_: None),
        ],
        readings={"WR-4": "slot-kept"},
    ),
    Variant(
        "count_cap_per_campaign",
        Capability.WORK_REQUESTS,
        "applies the count cap to the whole campaign rather than to each session",
        lambda: [Patch(delegation, "_take_child_slot", take_slot_in_campaign)],
        readings={"WR-18": "per-campaign"},
    ),
    Variant(
        "grant_names_folded",
        Capability.WORK_REQUESTS,
        "compares grant names ignoring case and trailing spaces, as MySQL's default collation does",
        lambda: [Patch(delegation, "ensure_narrowing", ensure_folded_narrowing)],
        readings={"WR-25": "names-folded"},
    ),
    Variant(
        "any_principal_as_assignee",
        Capability.WORK_REQUESTS,
        "accepts an assignee who is not a member of the environment",
        lambda: [Patch(delegation, "_ensure_assignee_is_member", any_assignee)],
        readings={"WR-23": "assignee-unchecked"},
    ),
]
