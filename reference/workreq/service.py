"""The work-request facade the coordinator exposes.

Each operation reads the injected clock once and writes in one transaction (a
claim's and a heartbeat's write is a single conditional UPDATE, which commits
on its own), and nothing is kept between calls: a new service on the same store
sees everything.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from conformance.reference import crash_points
from conformance.reference.clock import Clock
from conformance.reference.crash_points import CrashPoint
from conformance.reference.db import Database
from conformance.reference.errors import AlreadyCompleted, NotFound
from conformance.reference.workreq import budget_ledger, lease, registry
from conformance.reference.workreq.delegation import DelegationOrder
from conformance.reference.workreq.delegation import delegate as delegate_request
from conformance.reference.workreq.models import DelegationSession, State, WorkRequestRecord
from conformance.reference.workreq.permissions import PermissionSet
from conformance.reference.workreq.settings import SETTINGS, WorkRequestSettings
from conformance.reference.workreq.store import (
    find_campaign,
    find_session,
    is_member,
    read_request,
)
from conformance.reference.workreq.views import (
    BudgetView,
    CompletionView,
    LeaseView,
    RequestView,
    SessionView,
    request_view,
    session_view,
)

LISTING_REFUSAL = "no such environment among those the principal belongs to"


class WorkRequestService:
    def __init__(
        self, db: Database, clock: Clock, settings: WorkRequestSettings = SETTINGS
    ) -> None:
        self._db = db
        self._clock = clock
        self._settings = settings

    def limits(self) -> WorkRequestSettings:
        return self._settings

    # -- setup -----------------------------------------------------------------
    def create_environment(self, environment_id: str, members: Sequence[str]) -> None:
        with self._db.transaction() as tx:
            registry.create_environment(tx, environment_id, members)

    def create_campaign(self, campaign_id: str, environment_id: str, budget: int) -> None:
        with self._db.transaction() as tx:
            registry.create_campaign(tx, campaign_id, environment_id, budget)

    def create_session(
        self, session_id: str, campaign_id: str, principal: str, permissions: PermissionSet
    ) -> None:
        with self._db.transaction() as tx:
            registry.create_root_session(tx, session_id, campaign_id, principal, permissions)

    # -- actions -----------------------------------------------------------------
    def delegate(
        self,
        kind: str,
        originating_session_id: str,
        *,
        deliverable: str,
        acceptance_checks: Sequence[str],
        budget_slice: int,
        permissions: PermissionSet,
        assignee: str | None,
    ) -> RequestView:
        order = DelegationOrder(
            kind=kind,
            originating_session_id=originating_session_id,
            deliverable=deliverable,
            acceptance_checks=tuple(acceptance_checks),
            budget_slice=budget_slice,
            permissions=permissions,
            assignee=assignee,
        )
        now = self._clock.now()
        with self._db.transaction() as tx:
            record = delegate_request(tx, order, self._settings, now)
            return request_view(record, now)

    def claim(self, request_id: str, holder: str) -> LeaseView:
        now = self._clock.now()
        with self._db.statements() as tx:
            claimed = lease.claim(tx, request_id, holder, now, self._settings.lease_duration)
        crash_points.reached(CrashPoint.CLAIM_COMMITTED)
        return claimed

    def heartbeat(self, request_id: str, holder: str, generation: int) -> LeaseView:
        now = self._clock.now()
        with self._db.statements() as tx:
            return lease.heartbeat(
                tx, request_id, holder, generation, now, self._settings.lease_duration
            )

    def publish(
        self, request_id: str, holder: str, generation: int, result_ref: str
    ) -> CompletionView:
        """Complete under the fence, or answer an exact retry with the recorded completion."""
        registry.require_id(result_ref, "the result reference")
        now = self._clock.now()
        with self._db.statement_transaction() as tx:
            try:
                completed = lease.fence_completion(
                    tx, request_id, holder, generation, result_ref, now
                )
            except AlreadyCompleted:
                recorded = lease.recorded_completion(tx, request_id).view
                return _retry_answer(recorded, holder, generation, result_ref)
            budget_ledger.settle(tx, completed)
        crash_points.reached(CrashPoint.RESULT_WRITTEN)
        return completed.view

    def record_usage(self, session_id: str, amount: int) -> None:
        registry.require_amount(amount, "usage")
        with self._db.transaction() as tx:
            budget_ledger.charge_usage(tx, find_session(tx, session_id), amount)

    # -- observation -------------------------------------------------------------
    def get_request(self, request_id: str) -> RequestView:
        now = self._clock.now()
        with self._db.statements() as tx:
            return request_view(read_request(tx, request_id), now)

    def list_requests(self, environment_id: str, principal: str) -> list[RequestView]:
        """Open and in-progress requests, for members only.

        A missing environment and a non-member get the same refusal, so that
        listing cannot be used to learn which environments exist.
        """
        now = self._clock.now()
        with self._db.transaction() as tx:
            if not is_member(tx, environment_id, principal):
                raise NotFound(LISTING_REFUSAL)
            records = tx.scalars(
                select(WorkRequestRecord)
                .where(WorkRequestRecord.environment_id == environment_id)
                .where(WorkRequestRecord.state != State.COMPLETED)
                .order_by(WorkRequestRecord.seq)
            )
            return [request_view(record, now) for record in records]

    def budget(self, campaign_id: str) -> BudgetView:
        with self._db.statements() as tx:
            return budget_ledger.snapshot(tx, campaign_id)

    def list_sessions(self, campaign_id: str) -> list[SessionView]:
        """Every session of the campaign, roots and children (in no particular order)."""
        with self._db.transaction() as tx:
            find_campaign(tx, campaign_id)
            rows = tx.scalars(
                select(DelegationSession)
                .where(DelegationSession.campaign_id == campaign_id)
                .order_by(DelegationSession.depth, DelegationSession.session_id)
            )
            return [session_view(row) for row in rows]


def _retry_answer(
    recorded: CompletionView, holder: str, generation: int, result_ref: str
) -> CompletionView:
    """A publish on a completed request: an exact retry of the completion gets its answer.

    A duplicate sent concurrently with the original may take effect after it,
    and is then a retry like any other.
    """
    if not is_exact_retry(recorded, holder, generation, result_ref):
        raise AlreadyCompleted(f"work request {recorded.request_id!r} is completed")
    return recorded


def is_exact_retry(recorded: CompletionView, holder: str, generation: int, result_ref: str) -> bool:
    return (recorded.holder, recorded.generation, recorded.result_ref) == (
        holder,
        generation,
        result_ref,
    )
