"""A small delegation world for the work-request unit tests: one environment, campaign and root."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from conformance.reference.clock import ManualClock
from conformance.reference.db import Database
from conformance.reference.workreq.permissions import PermissionSet
from conformance.reference.workreq.service import WorkRequestService
from conformance.reference.workreq.views import BudgetView, CompletionView, RequestView

ENVIRONMENT = "env"
CAMPAIGN = "camp"
ROOT = "root"
MEMBERS = ("alice", "bob", "carol", "dave", "erin", "frank")
ROOT_GRANTS = PermissionSet(
    tools=frozenset({"git", "shell", "browser"}), devices=frozenset({"gpu", "camera"})
)
NOTHING = PermissionSet()


class World:
    """The service under test plus shortcuts for the moves most tests repeat."""

    def __init__(self, database: Database, clock: ManualClock, *, budget: int = 100) -> None:
        self.database = database
        self.clock = clock
        self.service = WorkRequestService(database, clock)
        self.service.create_environment(ENVIRONMENT, list(MEMBERS))
        self.service.create_campaign(CAMPAIGN, ENVIRONMENT, budget)
        self.service.create_session(ROOT, CAMPAIGN, "alice", ROOT_GRANTS)

    def delegate(
        self,
        origin: str = ROOT,
        budget_slice: int = 10,
        *,
        permissions: PermissionSet = NOTHING,
        assignee: str | None = None,
        kind: str = "spawn",
    ) -> RequestView:
        return self.service.delegate(
            kind,
            origin,
            deliverable="a report",
            acceptance_checks=["it exists"],
            budget_slice=budget_slice,
            permissions=permissions,
            assignee=assignee,
        )

    def complete(self, request_id: str, holder: str = "bob") -> CompletionView:
        lease = self.service.claim(request_id, holder)
        return self.service.publish(request_id, holder, lease.generation, f"result:{request_id}")

    def budget(self) -> BudgetView:
        return self.service.budget(CAMPAIGN)


@contextmanager
def another_service(database: Database, clock: ManualClock) -> Iterator[WorkRequestService]:
    """A second coordinator on the same store, sharing nothing in memory with the first."""
    other = Database(database.url)
    try:
        yield WorkRequestService(other, clock)
    finally:
        other.dispose()
