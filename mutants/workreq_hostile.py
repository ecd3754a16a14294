"""Mutants only hostile data shows: names matched loosely, filters that mix environments.

Each is right for every name and environment that contains no other one. A grant looked up in
the held names joined into one text, or a held grant taken for a namespace of longer names,
passes every scenario whose grant names are unrelated; a listing filtered by prefix, or by the
environments its principal belongs to, passes every scenario whose environments share neither
a prefix nor a member. The pools of `conformance.properties.hostile_data` and the Gherkin
scenarios drawn from them (names that contain one another, a principal in two environments)
are what catch them.
"""

from __future__ import annotations

from sqlalchemy import select

from conformance.adapters.edits import edited
from conformance.adapters.patched import Capability, Patch
from conformance.mutants.collation import folded
from conformance.mutants.mutant import Mutant
from conformance.reference import app
from conformance.reference.errors import NotFound, PermissionEscalation
from conformance.reference.workreq import budget_ledger, delegation
from conformance.reference.workreq.budget_ledger import snapshot as reference_snapshot
from conformance.reference.workreq.models import (
    Campaign,
    EnvironmentMember,
    State,
    WorkRequestRecord,
)
from conformance.reference.workreq.permissions import PermissionSet
from conformance.reference.workreq.service import LISTING_REFUSAL, WorkRequestService
from conformance.reference.workreq.store import Executor, is_member
from conformance.reference.workreq.views import BudgetView, RequestView, request_view


def _refuse(excess: list[str]) -> None:
    if excess:
        raise PermissionEscalation(f"the originator lacks {sorted(excess)}")


def ensure_narrowing_in_text(requested: PermissionSet, held: PermissionSet) -> None:
    """Looks each requested name up in the held names joined into one text, as a grant column
    stored comma-separated would be searched: "hell" and "sh" are found in "browser,shell"."""
    tools, devices = ",".join(held.tool_list()), ",".join(held.device_list())
    excess = [name for name in requested.tools if name not in tools]
    _refuse(excess + [name for name in requested.devices if name not in devices])


def ensure_narrowing_by_namespace(requested: PermissionSet, held: PermissionSet) -> None:
    """Takes a held grant for a namespace: it covers every name it begins, so "shell" lets a
    child have "shell-admin" (and "sh" lets it have "shell")."""

    def covered(name: str, names: frozenset[str]) -> bool:
        return any(name.startswith(granted) for granted in names)

    excess = [name for name in requested.tools if not covered(name, held.tools)]
    _refuse(excess + [name for name in requested.devices if not covered(name, held.devices)])


def folded_snapshot(tx: Executor, campaign_id: str) -> BudgetView:
    """Looks the campaign up as a case-insensitive, space-padding collation does, then reads
    that campaign's budget: "Launch" and "launch " read the budget of whichever sorts first."""
    found = tx.execute(
        select(Campaign.campaign_id)
        .where(folded(Campaign.campaign_id, campaign_id))
        .order_by(Campaign.campaign_id)
        .limit(1)
    ).scalar()
    return reference_snapshot(tx, campaign_id if found is None else found)


class FoldedListingService(WorkRequestService):
    """Matches the environment and the principal as a case-insensitive, space-padding collation
    does: "Alice" lists what alice may, and "Studio" lists studio's requests."""

    def list_requests(self, environment_id: str, principal: str) -> list[RequestView]:
        now = self._clock.now()
        with self._db.transaction() as tx:
            member = tx.scalars(
                select(EnvironmentMember)
                .where(folded(EnvironmentMember.environment_id, environment_id))
                .where(folded(EnvironmentMember.principal, principal))
            ).first()
            if member is None:
                raise NotFound(LISTING_REFUSAL)
            records = tx.scalars(
                select(WorkRequestRecord)
                .where(folded(WorkRequestRecord.environment_id, environment_id))
                .where(WorkRequestRecord.state != State.COMPLETED)
                .order_by(WorkRequestRecord.seq)
            )
            return [request_view(record, now) for record in records]


class MembershipListingService(WorkRequestService):
    """Checks the principal's membership of the environment asked for, then lists the requests
    of every environment the principal belongs to: a member of two sees both in each listing."""

    def list_requests(self, environment_id: str, principal: str) -> list[RequestView]:
        now = self._clock.now()
        with self._db.transaction() as tx:
            if not is_member(tx, environment_id, principal):
                raise NotFound(LISTING_REFUSAL)
            theirs = select(EnvironmentMember.environment_id).where(
                EnvironmentMember.principal == principal
            )
            records = tx.scalars(
                select(WorkRequestRecord)
                .where(WorkRequestRecord.environment_id.in_(theirs))
                .where(WorkRequestRecord.state != State.COMPLETED)
                .order_by(WorkRequestRecord.seq)
            )
            return [request_view(record, now) for record in records]


MUTANTS = [
    Mutant(
        "grants_found_in_joined_names",
        "AC-ARMONIA-WORKREQ-001.2",
        Capability.WORK_REQUESTS,
        "looks each requested grant up in the held names joined into one text (a substring "
        "match: a root holding shell lets a child have hell)",
        lambda: [Patch(delegation, "ensure_narrowing", ensure_narrowing_in_text)],
    ),
    Mutant(
        "grant_covers_longer_names",
        "AC-ARMONIA-WORKREQ-001.2",
        Capability.WORK_REQUESTS,
        "takes a held grant for a namespace covering every name it begins (a prefix match: "
        "shell lets a child have shell-admin)",
        lambda: [Patch(delegation, "ensure_narrowing", ensure_narrowing_by_namespace)],
    ),
    Mutant(
        "listing_by_environment_prefix",
        "AC-ARMONIA-WORKREQ-001.5",
        Capability.WORK_REQUESTS,
        "lists the requests of every environment whose id begins with the one asked for",
        lambda: [
            edited(
                WorkRequestService,
                "list_requests",
                ".where(WorkRequestRecord.environment_id == environment_id)",
                ".where(WorkRequestRecord.environment_id.startswith(environment_id))",
            )
        ],
    ),
    Mutant(
        "listing_every_membership",
        "AC-ARMONIA-WORKREQ-001.5",
        Capability.WORK_REQUESTS,
        "lists the requests of every environment the principal belongs to, not only the one "
        "asked for",
        lambda: [Patch(app, "WorkRequestService", MembershipListingService)],
    ),
    Mutant(
        "budget_by_folded_campaign",
        "AC-ARMONIA-WORKREQ-001.9",
        Capability.WORK_REQUESTS,
        "looks the campaign of a budget read up as a case-insensitive, space-padding collation "
        'does: "launch" and "launch " read the budget of "Launch", which sorts first',
        lambda: [Patch(budget_ledger, "snapshot", folded_snapshot)],
    ),
    Mutant(
        "listing_by_folded_names",
        "AC-ARMONIA-WORKREQ-001.5",
        Capability.WORK_REQUESTS,
        "matches environment and principal as a case-insensitive, space-padding collation does: "
        '"Alice" and "Studio" list studio\'s requests',
        lambda: [Patch(app, "WorkRequestService", FoldedListingService)],
    ),
]
