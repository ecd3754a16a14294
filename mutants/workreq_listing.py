"""Mutants of listing: who may list an environment's requests, and which requests they see."""

from __future__ import annotations

from sqlalchemy import select

from mutants.patching import Capability, Mutant, Patch
from reference import app
from reference.errors import NotFound
from reference.workreq.models import WorkRequestRecord
from reference.workreq.service import LISTING_REFUSAL, WorkRequestService
from reference.workreq.store import find_environment, is_member
from reference.workreq.views import RequestView, request_view


class EmptyForOutsidersService(WorkRequestService):
    """Refuses an unknown environment but answers a non-member of a known one with an empty list."""

    def list_requests(self, environment_id: str, principal: str) -> list[RequestView]:
        with self._db.transaction() as tx:
            known = find_environment(tx, environment_id) is not None
            member = is_member(tx, environment_id, principal)
        if known and not member:
            return []
        return super().list_requests(environment_id, principal)


class EveryRequestService(WorkRequestService):
    """Lists every request of the environment, completed ones included."""

    def list_requests(self, environment_id: str, principal: str) -> list[RequestView]:
        now = self._clock.now()
        with self._db.transaction() as tx:
            if not is_member(tx, environment_id, principal):
                raise NotFound(LISTING_REFUSAL)
            records = tx.scalars(
                select(WorkRequestRecord)
                .where(WorkRequestRecord.environment_id == environment_id)
                .order_by(WorkRequestRecord.seq)
            )
            return [request_view(record, now) for record in records]


MUTANTS = [
    Mutant(
        "non_member_gets_empty_list",
        "AC-ARMONIA-WORKREQ-001.5",
        Capability.WORK_REQUESTS,
        "answers a non-member with an empty list instead of the unknown-environment refusal",
        lambda: [Patch(app, "WorkRequestService", EmptyForOutsidersService)],
    ),
    Mutant(
        "listing_includes_completed",
        "AC-ARMONIA-WORKREQ-001.5",
        Capability.WORK_REQUESTS,
        "lists completed requests along with open and in-progress ones",
        lambda: [Patch(app, "WorkRequestService", EveryRequestService)],
    ),
]
