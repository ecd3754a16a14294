"""A model of delegation work requests: lineage, leases, budgets and permissions.

Each operation answers what the canonical semantics predict: the value an
implementation must return, or the ErrorCode it must refuse with. A refused
operation changes nothing in the model. The limits (depth and count caps, lease
duration) are the ones the implementation reports, never assumed numbers.

Both kinds of delegation (spawn, subagent) obey the same rules, so the model
does not distinguish them. Identifiers of requests and child sessions are
chosen by the implementation, so a delegation is predicted in two halves:
`delegation_refusal` says whether it must be refused, and `delegate` records
the accepted one under the identifiers the implementation returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from conformance.driver import (
    BudgetSnapshot,
    Completion,
    ErrorCode,
    Lease,
    Permissions,
    RequestState,
    WorkRequest,
    WorkRequestLimits,
)


@dataclass
class _Campaign:
    campaign_id: str
    environment_id: str
    total: int
    available: int
    root_spent: int = 0


@dataclass
class _Session:
    session_id: str
    campaign_id: str
    permissions: Permissions
    depth: int
    request_id: str | None
    """The request this session serves; None for a root session."""
    delegations: int = 0


@dataclass
class _Request:
    request_id: str
    environment_id: str
    campaign_id: str
    originating_session_id: str
    child_session_id: str
    deliverable: str
    acceptance_checks: list[str]
    budget_slice: int
    permissions: Permissions
    assignee: str | None
    remaining: int
    spent: int = 0
    holder: str | None = None
    generation: int = 0
    expires_at: datetime | None = None
    completion: Completion | None = None


def within(inner: Permissions, outer: Permissions) -> bool:
    """Whether `inner` grants nothing `outer` lacks, tools and devices separately."""
    return inner.tools <= outer.tools and inner.devices <= outer.devices


class WorkRequestOracle:
    """The predicted state of one implementation's work-request store."""

    def __init__(self, limits: WorkRequestLimits, now: datetime) -> None:
        self.limits = limits
        self.now = now
        self._members: dict[str, set[str]] = {}
        self._campaigns: dict[str, _Campaign] = {}
        self._sessions: dict[str, _Session] = {}
        self._requests: dict[str, _Request] = {}

    @property
    def lease_duration(self) -> timedelta:
        return timedelta(seconds=self.limits.lease_seconds)

    # -- clock -------------------------------------------------------------
    def set_clock(self, instant: datetime) -> None:
        self.now = instant

    def live_expiries(self) -> list[datetime]:
        """Expiry instants still ahead of the clock, of requests not completed."""
        return sorted(
            request.expires_at
            for request in self._requests.values()
            if request.completion is None
            and request.expires_at is not None
            and request.expires_at > self.now
        )

    # -- setup ---------------------------------------------------------------
    def create_environment(self, environment_id: str, members: list[str]) -> ErrorCode | None:
        if not environment_id or not members or environment_id in self._members:
            return ErrorCode.INVALID_INPUT
        self._members[environment_id] = set(members)
        return None

    def create_campaign(
        self, campaign_id: str, environment_id: str, budget: int
    ) -> ErrorCode | None:
        if not campaign_id or budget <= 0 or campaign_id in self._campaigns:
            return ErrorCode.INVALID_INPUT
        if environment_id not in self._members:
            return ErrorCode.NOT_FOUND
        self._campaigns[campaign_id] = _Campaign(campaign_id, environment_id, budget, budget)
        return None

    def create_session(
        self, session_id: str, campaign_id: str, principal: str, permissions: Permissions
    ) -> ErrorCode | None:
        if not session_id or session_id in self._sessions:
            return ErrorCode.INVALID_INPUT
        campaign = self._campaigns.get(campaign_id)
        if campaign is None or principal not in self._members[campaign.environment_id]:
            return ErrorCode.NOT_FOUND
        self._sessions[session_id] = _Session(session_id, campaign_id, permissions, 0, None)
        return None

    # -- delegation ----------------------------------------------------------
    def delegation_refusal(
        self,
        originating_session_id: str,
        *,
        deliverable: str,
        budget_slice: int,
        permissions: Permissions,
        assignee: str | None,
    ) -> ErrorCode | None:
        """The refusal a delegation must meet, in the canonical check order; None admits it."""
        origin = self._sessions.get(originating_session_id)
        if not deliverable or budget_slice <= 0:
            return ErrorCode.INVALID_INPUT
        if origin is not None and assignee is not None:
            environment = self._campaigns[origin.campaign_id].environment_id
            if assignee not in self._members[environment]:
                return ErrorCode.INVALID_INPUT
        if origin is None:
            return ErrorCode.NOT_FOUND
        if origin.depth + 1 > self.limits.max_depth:
            return ErrorCode.DEPTH_CAP
        if origin.delegations >= self.limits.max_children_per_session:
            return ErrorCode.COUNT_CAP
        if not within(permissions, origin.permissions):
            return ErrorCode.PERMISSION_ESCALATION
        if budget_slice > self._available_to(origin):
            return ErrorCode.INSUFFICIENT_BUDGET
        return None

    def delegate(
        self,
        originating_session_id: str,
        *,
        deliverable: str,
        acceptance_checks: list[str],
        budget_slice: int,
        permissions: Permissions,
        assignee: str | None,
        request_id: str,
        child_session_id: str,
    ) -> WorkRequest:
        """Record an admitted delegation under the identifiers the implementation chose."""
        origin = self._sessions[originating_session_id]
        campaign = self._campaigns[origin.campaign_id]
        self._draw(origin, budget_slice)
        origin.delegations += 1
        self._requests[request_id] = _Request(
            request_id=request_id,
            environment_id=campaign.environment_id,
            campaign_id=campaign.campaign_id,
            originating_session_id=originating_session_id,
            child_session_id=child_session_id,
            deliverable=deliverable,
            acceptance_checks=list(acceptance_checks),
            budget_slice=budget_slice,
            permissions=permissions,
            assignee=assignee,
            remaining=budget_slice,
        )
        self._sessions[child_session_id] = _Session(
            child_session_id,
            campaign.campaign_id,
            permissions=permissions,
            depth=origin.depth + 1,
            request_id=request_id,
        )
        return self._view(self._requests[request_id])

    # -- lease -----------------------------------------------------------------
    def claim(self, request_id: str, holder: str) -> Lease | ErrorCode:
        request = self._requests.get(request_id)
        if request is None or holder not in self._members[request.environment_id]:
            return ErrorCode.NOT_FOUND
        if request.assignee is not None and holder != request.assignee:
            return ErrorCode.NOT_ASSIGNEE
        if request.completion is not None:
            return ErrorCode.ALREADY_COMPLETED
        if self._live(request):
            return ErrorCode.LEASE_HELD
        request.generation += 1
        request.holder = holder
        request.expires_at = self.now + self.lease_duration
        return self._lease(request)

    def heartbeat(self, request_id: str, holder: str, generation: int) -> Lease | ErrorCode:
        request = self._requests.get(request_id)
        if request is None:
            return ErrorCode.NOT_FOUND
        refusal = self._fence(request, holder, generation)
        if refusal is not None:
            return refusal
        request.expires_at = self.now + self.lease_duration
        return self._lease(request)

    def publish(
        self, request_id: str, holder: str, generation: int, result_ref: str
    ) -> Completion | ErrorCode:
        if not result_ref:
            return ErrorCode.INVALID_INPUT
        request = self._requests.get(request_id)
        if request is None:
            return ErrorCode.NOT_FOUND
        recorded = request.completion
        if recorded is not None:
            retry = (recorded.holder, recorded.generation, recorded.result_ref)
            if retry == (holder, generation, result_ref):
                return recorded
            return ErrorCode.ALREADY_COMPLETED
        refusal = self._fence(request, holder, generation)
        if refusal is not None:
            return refusal
        returned = request.remaining
        self._give_back(request)
        request.completion = Completion(
            request_id=request_id,
            holder=holder,
            generation=generation,
            result_ref=result_ref,
            completed_at=self.now,
            budget_returned=returned,
        )
        return request.completion

    # -- budget ----------------------------------------------------------------
    def record_usage(self, session_id: str, amount: int) -> ErrorCode | None:
        if amount <= 0:
            return ErrorCode.INVALID_INPUT
        session = self._sessions.get(session_id)
        if session is None:
            return ErrorCode.NOT_FOUND
        if session.request_id is None:
            campaign = self._campaigns[session.campaign_id]
            if amount > campaign.available:
                return ErrorCode.INSUFFICIENT_BUDGET
            campaign.available -= amount
            campaign.root_spent += amount
            return None
        request = self._requests[session.request_id]
        if request.completion is not None:
            return ErrorCode.ALREADY_COMPLETED
        if amount > request.remaining:
            return ErrorCode.USAGE_EXCEEDS_SLICE
        request.remaining -= amount
        request.spent += amount
        return None

    def budget(self, campaign_id: str) -> BudgetSnapshot | ErrorCode:
        campaign = self._campaigns.get(campaign_id)
        if campaign is None:
            return ErrorCode.NOT_FOUND
        requests = [r for r in self._requests.values() if r.campaign_id == campaign_id]
        return BudgetSnapshot(
            campaign_id=campaign_id,
            total=campaign.total,
            available=campaign.available,
            reserved=sum(r.remaining for r in requests if r.completion is None),
            spent=campaign.root_spent + sum(r.spent for r in requests),
        )

    # -- observation -------------------------------------------------------------
    def get_request(self, request_id: str) -> WorkRequest | ErrorCode:
        request = self._requests.get(request_id)
        if request is None:
            return ErrorCode.NOT_FOUND
        return self._view(request)

    def list_requests(self, environment_id: str, principal: str) -> list[WorkRequest] | ErrorCode:
        if principal not in self._members.get(environment_id, set()):
            return ErrorCode.NOT_FOUND
        views = (
            self._view(r) for r in self._requests.values() if r.environment_id == environment_id
        )
        return [view for view in views if view.state is not RequestState.COMPLETED]

    # -- internals ---------------------------------------------------------------
    def _available_to(self, origin: _Session) -> int:
        """What a session may hand out: its campaign's available, or its request's remaining."""
        if origin.request_id is None:
            return self._campaigns[origin.campaign_id].available
        return self._requests[origin.request_id].remaining

    def _draw(self, origin: _Session, amount: int) -> None:
        if origin.request_id is None:
            self._campaigns[origin.campaign_id].available -= amount
        else:
            self._requests[origin.request_id].remaining -= amount

    def _give_back(self, request: _Request) -> None:
        """Hand a completing request's remaining to its nearest open ancestor, else the campaign."""
        amount, request.remaining = request.remaining, 0
        session = self._sessions[request.originating_session_id]
        while session.request_id is not None:
            ancestor = self._requests[session.request_id]
            if ancestor.completion is None:
                ancestor.remaining += amount
                return
            session = self._sessions[ancestor.originating_session_id]
        self._campaigns[request.campaign_id].available += amount

    def _live(self, request: _Request) -> bool:
        return (
            request.completion is None
            and request.expires_at is not None
            and self.now < request.expires_at
        )

    def _fence(self, request: _Request, holder: str, generation: int) -> ErrorCode | None:
        """The refusal of a heartbeat or publish that does not hold the current live lease."""
        if request.completion is not None:
            return ErrorCode.ALREADY_COMPLETED
        if request.holder is None or (request.holder, request.generation) != (holder, generation):
            return ErrorCode.STALE_GENERATION
        if not self._live(request):
            return ErrorCode.LEASE_EXPIRED
        return None

    def _lease(self, request: _Request) -> Lease:
        closed_at = request.completion.completed_at if request.completion else None
        return Lease(
            holder=request.holder,
            generation=request.generation,
            expires_at=request.expires_at,
            closed_at=closed_at,
        )

    def _state(self, request: _Request) -> RequestState:
        if request.completion is not None:
            return RequestState.COMPLETED
        return RequestState.IN_PROGRESS if self._live(request) else RequestState.OPEN

    def _view(self, request: _Request) -> WorkRequest:
        return WorkRequest(
            request_id=request.request_id,
            environment_id=request.environment_id,
            campaign_id=request.campaign_id,
            originating_session_id=request.originating_session_id,
            child_session_id=request.child_session_id,
            deliverable=request.deliverable,
            acceptance_checks=list(request.acceptance_checks),
            budget_slice=request.budget_slice,
            budget_spent=request.spent,
            permissions=request.permissions,
            assignee=request.assignee,
            lease=self._lease(request),
            state=self._state(request),
            result_ref=request.completion.result_ref if request.completion else None,
        )
