"""The work-request half of the in-process adapter: port values onto the WorkRequestService."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from conformance.driver import (
    BudgetSnapshot,
    Completion,
    DelegationKind,
    Lease,
    Permissions,
    SessionView,
    WorkRequest,
    WorkRequestLimits,
)
from conformance.reference.workreq.permissions import PermissionSet

if TYPE_CHECKING:
    from conformance.reference.app import Coordinator
    from conformance.reference.workreq.service import WorkRequestService

T = TypeVar("T")


class WorkRequestOperations:
    """Mixin for InProcessDriver: every work-request operation of the driver port."""

    coordinator: Coordinator

    if TYPE_CHECKING:

        def call(self, operation: Callable[[], T]) -> T: ...

    @property
    def _work_requests(self) -> WorkRequestService:
        return self.coordinator.work_requests

    def work_request_limits(self) -> WorkRequestLimits:
        return WorkRequestLimits.model_validate(self._work_requests.limits(), from_attributes=True)

    # -- setup -----------------------------------------------------------------
    def create_environment(self, environment_id: str, members: list[str]) -> None:
        service = self._work_requests
        self.call(lambda: service.create_environment(environment_id, members))

    def create_campaign(self, campaign_id: str, environment_id: str, budget: int) -> None:
        service = self._work_requests
        self.call(lambda: service.create_campaign(campaign_id, environment_id, budget))

    def create_session(
        self, session_id: str, campaign_id: str, principal: str, permissions: Permissions
    ) -> None:
        service = self._work_requests
        granted = _permission_set(permissions)
        self.call(lambda: service.create_session(session_id, campaign_id, principal, granted))

    # -- actions -----------------------------------------------------------------
    def delegate(
        self,
        kind: DelegationKind,
        originating_session_id: str,
        *,
        deliverable: str,
        acceptance_checks: list[str],
        budget_slice: int,
        permissions: Permissions,
        assignee: str | None,
    ) -> WorkRequest:
        service = self._work_requests
        view = self.call(
            lambda: service.delegate(
                DelegationKind(kind).value,
                originating_session_id,
                deliverable=deliverable,
                acceptance_checks=acceptance_checks,
                budget_slice=budget_slice,
                permissions=_permission_set(permissions),
                assignee=assignee,
            )
        )
        return WorkRequest.model_validate(view, from_attributes=True)

    def claim(self, request_id: str, holder: str) -> Lease:
        service = self._work_requests
        return Lease.model_validate(
            self.call(lambda: service.claim(request_id, holder)), from_attributes=True
        )

    def heartbeat(self, request_id: str, holder: str, generation: int) -> Lease:
        service = self._work_requests
        lease = self.call(lambda: service.heartbeat(request_id, holder, generation))
        return Lease.model_validate(lease, from_attributes=True)

    def publish(self, request_id: str, holder: str, generation: int, result_ref: str) -> Completion:
        service = self._work_requests
        view = self.call(lambda: service.publish(request_id, holder, generation, result_ref))
        return Completion.model_validate(view, from_attributes=True)

    def record_usage(self, session_id: str, amount: int) -> None:
        service = self._work_requests
        self.call(lambda: service.record_usage(session_id, amount))

    # -- observation -------------------------------------------------------------
    def get_request(self, request_id: str) -> WorkRequest:
        service = self._work_requests
        view = self.call(lambda: service.get_request(request_id))
        return WorkRequest.model_validate(view, from_attributes=True)

    def list_requests(self, environment_id: str, principal: str) -> list[WorkRequest]:
        service = self._work_requests
        views = self.call(lambda: service.list_requests(environment_id, principal))
        return [WorkRequest.model_validate(view, from_attributes=True) for view in views]

    def list_sessions(self, campaign_id: str) -> list[SessionView]:
        service = self._work_requests
        views = self.call(lambda: service.list_sessions(campaign_id))
        return [SessionView.model_validate(view, from_attributes=True) for view in views]

    def budget(self, campaign_id: str) -> BudgetSnapshot:
        service = self._work_requests
        view = self.call(lambda: service.budget(campaign_id))
        return BudgetSnapshot.model_validate(view, from_attributes=True)


def _permission_set(permissions: Permissions) -> PermissionSet:
    return PermissionSet(tools=permissions.tools, devices=permissions.devices)
