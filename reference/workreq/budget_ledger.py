"""The budget ledger: slices reserved at delegation, usage charged, remainders returned once.

A root session's source is its campaign's available budget; a child session's
source is what remains of its request's slice. Every move is one conditional
UPDATE, so a concurrent draw can never overdraw a source, and every move keeps
total == available + reserved + spent for the campaign.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, bindparam, func, select, update
from sqlalchemy.orm import Session

from conformance.reference.errors import (
    AlreadyCompleted,
    InsufficientBudget,
    NotFound,
    UsageExceedsSlice,
)
from conformance.reference.workreq.lease import Completion
from conformance.reference.workreq.models import (
    CAMPAIGNS,
    REQUESTS,
    Campaign,
    DelegationSession,
    State,
    WorkRequestRecord,
    remaining_expression,
)
from conformance.reference.workreq.store import (
    Executor,
    conditional_update,
    find_request,
)
from conformance.reference.workreq.views import BudgetView


def reserve_slice(tx: Session, originator: DelegationSession, amount: int) -> None:
    """Move a new request's slice out of its originator's source."""
    if originator.request_id is None:
        drawn = _draw_from_campaign(tx, originator.campaign_id, amount, spend=False)
    else:
        drawn = conditional_update(
            tx,
            update(WorkRequestRecord)
            .where(_open_request_with_room(originator.request_id, amount))
            .values(carved=WorkRequestRecord.carved + amount),
        )
    if not drawn:
        raise InsufficientBudget(
            f"slice {amount} exceeds what session {originator.session_id!r} has available"
        )


def charge_usage(tx: Session, session: DelegationSession, amount: int) -> None:
    """Charge usage to the session's source: its request's slice, or its campaign."""
    if session.request_id is None:
        if not _draw_from_campaign(tx, session.campaign_id, amount, spend=True):
            raise InsufficientBudget(
                f"usage {amount} exceeds campaign {session.campaign_id!r}'s available budget"
            )
        return
    _charge_request(tx, session.request_id, amount)
    tx.execute(
        update(Campaign)
        .where(Campaign.campaign_id == session.campaign_id)
        .values(spent=Campaign.spent + amount)
    )


def settle(tx: Executor, completion: Completion) -> None:
    """Give what a completed request's slice did not use back to its originator's source.

    The fenced completion closed the slice in its own statement (it records what
    is returned, and only while nothing was), so a completion is settled once.
    """
    amount = completion.view.budget_returned
    if amount:
        _return_upwards(tx, completion.campaign_id, completion.parent_request_id, amount)


def snapshot(tx: Executor, campaign_id: str) -> BudgetView:
    """The campaign's budget in one statement, so its parts always come from one state of the
    store (two reads in a READ COMMITTED transaction could straddle a concurrent move)."""
    row = tx.execute(_SNAPSHOT, {"campaign": campaign_id}).first()
    if row is None:
        raise NotFound(f"no campaign {campaign_id!r}")
    return BudgetView(
        campaign_id=row.campaign_id,
        total=row.total,
        available=row.available,
        reserved=int(row.reserved),
        spent=row.spent,
    )


def _snapshot_statement() -> Select[Any]:
    """Built once: observers read every campaign's budget after every step they take."""
    reserved = (
        select(func.coalesce(func.sum(remaining_expression()), 0))
        .where(REQUESTS.c.campaign_id == CAMPAIGNS.c.campaign_id)
        .where(REQUESTS.c.state != State.COMPLETED.value)
        .scalar_subquery()
    )
    campaign = CAMPAIGNS.c
    return select(
        campaign.campaign_id,
        campaign.total,
        campaign.available,
        campaign.spent,
        reserved.label("reserved"),
    ).where(campaign.campaign_id == bindparam("campaign"))


_SNAPSHOT = _snapshot_statement()


def _draw_from_campaign(tx: Session, campaign_id: str, amount: int, *, spend: bool) -> bool:
    """Take `amount` from the campaign's available budget, as usage or as a reservation."""
    values = {"available": Campaign.available - amount}
    if spend:
        values["spent"] = Campaign.spent + amount
    return conditional_update(
        tx,
        update(Campaign)
        .where(Campaign.campaign_id == campaign_id)
        .where(Campaign.available >= amount)
        .values(values),
    )


def _charge_request(tx: Session, request_id: str, amount: int) -> None:
    charged = conditional_update(
        tx,
        update(WorkRequestRecord)
        .where(_open_request_with_room(request_id, amount))
        .values(spent=WorkRequestRecord.spent + amount),
    )
    if charged:
        return
    record = find_request(tx, request_id)
    if record.state == State.COMPLETED:
        raise AlreadyCompleted(f"work request {request_id!r} is completed; its slice is closed")
    raise UsageExceedsSlice(
        f"usage {amount} exceeds the {record.remaining} left of request {request_id!r}'s slice"
    )


def _open_request_with_room(request_id: str, amount: int) -> ColumnElement[bool]:
    return (
        (WorkRequestRecord.request_id == request_id)
        & (WorkRequestRecord.state != State.COMPLETED)
        & (remaining_expression() >= amount)
    )


def _return_upwards(
    tx: Executor, campaign_id: str, parent_request_id: str | None, amount: int
) -> None:
    """Give `amount` back to the nearest non-completed ancestor request, else the campaign."""
    ancestor_id = parent_request_id
    while ancestor_id is not None:
        if conditional_update(
            tx, _GIVE_BACK_TO_REQUEST, {"ancestor": ancestor_id, "amount": amount}
        ):
            return
        ancestor_id = tx.scalar(_PARENT_OF, {"ancestor": ancestor_id})
    tx.execute(_GIVE_BACK_TO_CAMPAIGN, {"campaign": campaign_id, "amount": amount})


_GIVE_BACK_TO_REQUEST = (
    update(REQUESTS)
    .where(REQUESTS.c.request_id == bindparam("ancestor"))
    .where(REQUESTS.c.state != State.COMPLETED.value)
    .values(carved=REQUESTS.c.carved - bindparam("amount"))
)
_PARENT_OF = select(REQUESTS.c.parent_request_id).where(
    REQUESTS.c.request_id == bindparam("ancestor")
)
_GIVE_BACK_TO_CAMPAIGN = (
    update(CAMPAIGNS)
    .where(CAMPAIGNS.c.campaign_id == bindparam("campaign"))
    .values(available=CAMPAIGNS.c.available + bindparam("amount"))
)
"""Built once: every completion with something left runs one or more of them."""
