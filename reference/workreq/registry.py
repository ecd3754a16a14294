"""Setting up who may delegate: environments and their members, campaigns, root sessions."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from conformance.reference.errors import InvalidInput, NotFound
from conformance.reference.workreq.models import (
    Campaign,
    DelegationSession,
    Environment,
    EnvironmentMember,
)
from conformance.reference.workreq.permissions import PermissionSet
from conformance.reference.workreq.store import find_campaign, find_environment, is_member


def require_id(value: str, what: str) -> None:
    if not value.strip():
        raise InvalidInput(f"{what} must not be blank")


#: Amounts are stored in 32-bit integer columns on every dialect.
MAX_AMOUNT = 2**31 - 1


def require_amount(value: object, what: str) -> int:
    """A budget, slice or usage: a whole number from 1 to MAX_AMOUNT (a bool is no number)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{what} must be a whole number, not {value!r}")
    if not 0 < value <= MAX_AMOUNT:
        raise InvalidInput(f"{what} must be between 1 and {MAX_AMOUNT}, not {value}")
    return value


def create_environment(tx: Session, environment_id: str, members: Sequence[str]) -> None:
    require_id(environment_id, "environment id")
    if not members:
        raise InvalidInput("an environment needs at least one member")
    for member in members:
        require_id(member, "member")
    if find_environment(tx, environment_id) is not None:
        raise InvalidInput(f"environment {environment_id!r} already exists")
    tx.add(Environment(environment_id=environment_id))
    tx.flush()
    tx.add_all(
        EnvironmentMember(environment_id=environment_id, principal=member)
        for member in dict.fromkeys(members)
    )


def create_campaign(tx: Session, campaign_id: str, environment_id: str, budget: int) -> None:
    require_id(campaign_id, "campaign id")
    require_amount(budget, "a campaign budget")
    if tx.get(Campaign, campaign_id) is not None:
        raise InvalidInput(f"campaign {campaign_id!r} already exists")
    if find_environment(tx, environment_id) is None:
        raise NotFound(f"no environment {environment_id!r}")
    tx.add(
        Campaign(
            campaign_id=campaign_id,
            environment_id=environment_id,
            total=budget,
            available=budget,
            spent=0,
        )
    )


def create_root_session(
    tx: Session, session_id: str, campaign_id: str, principal: str, permissions: PermissionSet
) -> None:
    """A depth-0 session of a member, drawing on its campaign."""
    require_id(session_id, "session id")
    if tx.get(DelegationSession, session_id) is not None:
        raise InvalidInput(f"session {session_id!r} already exists")
    campaign = find_campaign(tx, campaign_id)
    if not is_member(tx, campaign.environment_id, principal):
        raise NotFound(f"{principal!r} is not a member of the campaign's environment")
    tx.add(
        DelegationSession(
            session_id=session_id,
            campaign_id=campaign_id,
            principal=principal,
            depth=0,
            tools=permissions.tool_list(),
            devices=permissions.device_list(),
            children_count=0,
        )
    )
