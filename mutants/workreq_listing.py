"""Mutants of listing: who may list an environment's requests, and which requests they see."""

from __future__ import annotations

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference import app
from conformance.reference.workreq.service import WorkRequestService
from conformance.reference.workreq.store import find_environment, is_member
from conformance.reference.workreq.views import RequestView


class EmptyForOutsidersService(WorkRequestService):
    """Refuses an unknown environment but answers a non-member of a known one with an empty list."""

    def list_requests(self, environment_id: str, principal: str) -> list[RequestView]:
        with self._db.transaction() as tx:
            known = find_environment(tx, environment_id) is not None
            member = is_member(tx, environment_id, principal)
        if known and not member:
            return []
        return super().list_requests(environment_id, principal)


class OwnQueueListingService(WorkRequestService):
    """Lists a member's own queue: what nobody or the member is assigned, not what is someone
    else's, though every one of them is open or in progress in the environment."""

    def list_requests(self, environment_id: str, principal: str) -> list[RequestView]:
        return [
            view
            for view in super().list_requests(environment_id, principal)
            if view.assignee in (None, principal)
        ]


MUTANTS = [
    Mutant(
        "non_member_gets_empty_list",
        "AC-ARMONIA-WORKREQ-001.5",
        Capability.WORK_REQUESTS,
        "answers a non-member with an empty list instead of the unknown-environment refusal",
        lambda: [Patch(app, "WorkRequestService", EmptyForOutsidersService)],
    ),
    Mutant(
        "listing_hides_others_assigned",
        "AC-ARMONIA-WORKREQ-001.5",
        Capability.WORK_REQUESTS,
        "a member's listing leaves out the requests assigned to another member",
        lambda: [Patch(app, "WorkRequestService", OwnQueueListingService)],
    ),
]
