"""A model of delegation work requests: lineage, leases, budgets and permissions.

Each operation is predicted in two halves. `*_refusals` answers the set of
refusal codes that apply to it: empty when it must be accepted, otherwise every
code whose condition holds, since the spec never ranks one refusal above
another and an implementation may answer with any of them. The recording half
(`delegate`, `claim`, `extend`, `complete`, `record_usage`) then records an
accepted operation, adopting the values the spec leaves to the implementation:
the identifiers it chose, the grant it narrowed to, the generation of a claim
(the spec asks only that it be newer), the expiry a renewal moved to, the
instant a completion was recorded. Where no value is given, the recording half
takes the reference's reading (WR-7: the next generation; an expiry one lease
duration from now), so the model also serves hand-written cases.

A refused operation changes nothing in the model. The limits (depth and count
caps, lease duration) are the ones the implementation reports, never assumed
numbers (WR-12). Both kinds of delegation obey the same rules; the model only
remembers which kind made each request.

Where the spec leaves a question open, the model predicts by a reading of it: the kit's
(the register's interpretation), or an alternative the register lists (`readings`, by
interpretation ID). A harness that sees an implementation answer as an alternative predicts
would have it switches the model to that reading (`follow`) and goes on checking the rest.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from datetime import datetime, timedelta
from typing import TypeVar, Unpack

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
from conformance.oracle.grants import within
from conformance.oracle.refusals import ACCEPTED, ROOT_USAGE_REFUSALS, Refusals, applying
from conformance.oracle.work_request_records import (
    CampaignRecord,
    Delegated,
    RequestRecord,
    SessionRecord,
    changing,
    clone,
)
from conformance.spec.registry import KIT_READING

T = TypeVar("T")

FOLLOWED: Mapping[str, frozenset[str]] = {
    "WR-1": frozenset({"from-campaign"}),
    "WR-2": frozenset({"capped-usage"}),
    "WR-3": frozenset({"forfeit"}),
    "WR-4": frozenset({"slot-kept"}),
    "WR-6": frozenset({"outsider-forbidden"}),
    "WR-7": frozenset({"newer-not-next", "heartbeat-regenerates"}),
    "WR-10": frozenset({"retry-refused"}),
    "WR-11": frozenset({"distinct-refusal"}),
    "WR-23": frozenset({"assignee-unchecked"}),
    "WR-24": frozenset({"zero-usage-accepted"}),
    "WR-14": frozenset({"root-usage-refused"}),
    "WR-15": frozenset({"to-campaign", "lost-past-completed"}),
    "WR-17": frozenset({"completed-listed"}),
    "WR-18": frozenset({"per-campaign"}),
    "WR-19": frozenset({"renews-expired"}),
    "WR-20": frozenset({"in-progress-until-claimed"}),
}
"""The alternative readings this model predicts by (the register marks them `followed`)."""


class WorkRequestOracle:
    """The predicted state of one implementation's work-request store."""

    def __init__(
        self, limits: WorkRequestLimits, now: datetime, readings: Mapping[str, str] | None = None
    ) -> None:
        self.limits = limits
        self.now = now
        self.readings: dict[str, str] = {
            question: name for question, name in (readings or {}).items() if name != KIT_READING
        }
        """The alternative readings the model predicts by, by interpretation ID."""
        self._members: dict[str, set[str]] = {}
        self._campaigns: dict[str, CampaignRecord] = {}
        self._sessions: dict[str, SessionRecord] = {}
        self._requests: dict[str, RequestRecord] = {}

    def copy(self) -> WorkRequestOracle:
        """An independent copy, for a search that tries one order after another: the records
        are copied one level deep (their lists, sets and values are never changed in place)."""
        twin = clone(self)
        twin.readings = dict(self.readings)
        twin._campaigns = {key: clone(value) for key, value in self._campaigns.items()}
        twin._sessions = {key: clone(value) for key, value in self._sessions.items()}
        twin._requests = {key: clone(value) for key, value in self._requests.items()}
        twin._members = dict(self._members)
        return twin

    def state_key(self) -> Hashable:
        """The whole predicted state as one value, equal for two states that predict alike: the
        fields an operation changes, beside the ids (what a record was made with never changes,
        and a record made otherwise has another id)."""
        return (
            self.now,
            tuple(sorted(self.readings.items())),
            tuple(sorted((key, tuple(sorted(members))) for key, members in self._members.items())),
            tuple(
                sorted((c.campaign_id, c.available, c.root_spent) for c in self._campaigns.values())
            ),
            tuple(
                sorted((s.session_id, s.delegations, s.kept_slots) for s in self._sessions.values())
            ),
            tuple(sorted(changing(request) for request in self._requests.values())),
        )

    def reads(self, interpretation: str, name: str) -> bool:
        """Whether the model predicts `interpretation` by the alternative `name`."""
        return self.readings.get(interpretation, KIT_READING) == name

    def follow(self, interpretation: str, name: str) -> None:
        """Predict `interpretation` by the reading `name` from now on (`kit` for the kit's)."""
        if name == KIT_READING:
            self.readings.pop(interpretation, None)
        elif name in FOLLOWED.get(interpretation, frozenset()):
            self.readings[interpretation] = name
        else:
            raise ValueError(f"the model cannot predict {interpretation} as {name!r}")

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

    def fresh_expiry(self) -> datetime:
        """When a lease granted now expires, by the duration the implementation reports."""
        return self.now + self.lease_duration

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
        self._campaigns[campaign_id] = CampaignRecord(campaign_id, environment_id, budget, budget)
        return None

    def create_session(
        self, session_id: str, campaign_id: str, principal: str, permissions: Permissions
    ) -> ErrorCode | None:
        if not session_id or session_id in self._sessions:
            return ErrorCode.INVALID_INPUT
        campaign = self._campaigns.get(campaign_id)
        if campaign is None or principal not in self._members[campaign.environment_id]:
            return ErrorCode.NOT_FOUND
        self._sessions[session_id] = SessionRecord(session_id, campaign_id, permissions, 0, None)
        return None

    # -- delegation ----------------------------------------------------------
    def delegation_refusals(
        self,
        originating_session_id: str,
        *,
        deliverable: str,
        budget_slice: int,
        permissions: Permissions,
        assignee: str | None,
    ) -> Refusals:
        """Every refusal that applies to a delegation, whatever order an implementation checks in.

        PERMISSION_ESCALATION is the one an implementation may also meet by
        narrowing the grant (see `may_narrow`).
        """
        bad_input = not deliverable or budget_slice < 1
        origin = self._sessions.get(originating_session_id)
        if origin is None:
            return applying((bad_input, ErrorCode.INVALID_INPUT), (True, ErrorCode.NOT_FOUND))
        environment = self._campaigns[origin.campaign_id].environment_id
        stranger = (
            assignee is not None
            and assignee not in self._members[environment]
            and not self.reads("WR-23", "assignee-unchecked")
        )
        served = self._requests.get(origin.request_id or "")
        return applying(
            (bad_input or stranger, ErrorCode.INVALID_INPUT),
            (origin.depth + 1 > self.limits.max_depth, ErrorCode.DEPTH_CAP),
            (
                self.delegations_counted(origin) >= self.limits.max_children_per_session,
                ErrorCode.COUNT_CAP,
            ),
            (not within(permissions, origin.permissions), ErrorCode.PERMISSION_ESCALATION),
            (budget_slice > self._available_to(origin), ErrorCode.INSUFFICIENT_BUDGET),
            (served is not None and served.completion is not None, ErrorCode.ALREADY_COMPLETED),
        )

    def delegations_counted(self, origin: SessionRecord) -> int:
        """What the count cap compares, by the readings the model follows: the originator's own
        delegations or its campaign's (WR-18), with or without the slots refused delegations
        kept (WR-4)."""
        return self._counted(origin, self.reads("WR-18", "per-campaign"), self._kept())

    def _counted(self, origin: SessionRecord, per_campaign: bool, kept: bool) -> int:
        sessions = (
            [s for s in self._sessions.values() if s.campaign_id == origin.campaign_id]
            if per_campaign
            else [origin]
        )
        return sum(s.delegations + (s.kept_slots if kept else 0) for s in sessions)

    def _kept(self) -> bool:
        return self.reads("WR-4", "slot-kept")

    def count_cap_readings_differ(self, session_id: str) -> bool:
        """Whether the two readings of WR-18 judge the session's next delegation differently."""
        origin, cap, kept = (
            self._sessions[session_id],
            self.limits.max_children_per_session,
            self._kept(),
        )
        return (self._counted(origin, False, kept) >= cap) != (
            self._counted(origin, True, kept) >= cap
        )

    def slot_readings_differ(self, session_id: str) -> bool:
        """Whether the two readings of WR-4 judge the session's next delegation differently."""
        origin, cap = self._sessions[session_id], self.limits.max_children_per_session
        per_campaign = self.reads("WR-18", "per-campaign")
        return (self._counted(origin, per_campaign, False) >= cap) != (
            self._counted(origin, per_campaign, True) >= cap
        )

    def refused(self, originating_session_id: str) -> None:
        """A delegation was refused: under WR-4's slot-kept reading it used up one of the
        originator's count-cap slots if one was left (kept whatever the model follows, so that
        the reading can be taken up later)."""
        origin = self._sessions.get(originating_session_id)
        per_campaign = self.reads("WR-18", "per-campaign")
        if origin is not None and (
            self._counted(origin, per_campaign, True) < self.limits.max_children_per_session
        ):
            origin.kept_slots += 1

    def delegations_left(self, session_id: str) -> int:
        """How many more delegations the session may make under every reading of WR-18 and
        WR-4 (its campaign's count, refused delegations' slots included, against the cap)."""
        origin = self._sessions[session_id]
        return max(0, self.limits.max_children_per_session - self._counted(origin, True, True))

    @staticmethod
    def may_narrow(refusals: Refusals) -> bool:
        """Whether a delegation may be accepted with a narrowed grant instead of refused:
        only when asking too much is all that is wrong with it."""
        return refusals == {ErrorCode.PERMISSION_ESCALATION}

    def delegate(self, originating_session_id: str, **made: Unpack[Delegated]) -> WorkRequest:
        """Record an accepted delegation under the identifiers the implementation chose.

        `permissions` is the set the child was granted (narrowed, if the
        implementation narrowed it); `generation` the one its unclaimed lease reports.
        """
        refusals = self.delegation_refusals(
            originating_session_id,
            deliverable=made["deliverable"],
            budget_slice=made["budget_slice"],
            permissions=made["permissions"],
            assignee=made["assignee"],
        )
        if refusals:
            raise ValueError(f"the delegation must be refused: {sorted(refusals)}")
        return self.adopt_delegation(originating_session_id, **made)

    def adopt_delegation(
        self, originating_session_id: str, **made: Unpack[Delegated]
    ) -> WorkRequest:
        """Record a delegation as made, whether or not the model would refuse it: one the
        implementation accepted where a clause requires a refusal (the break noted) takes its
        slice from its originator's source as an accepted one does, so the model goes on from
        what the implementation holds, the reads after it setting its figures straight."""
        origin = self._sessions[originating_session_id]
        campaign = self._campaigns[origin.campaign_id]
        request_id, budget_slice = made["request_id"], made["budget_slice"]
        self._draw(origin, budget_slice)
        origin.delegations += 1
        self._requests[request_id] = RequestRecord(
            request_id=request_id,
            kind=made["kind"],
            environment_id=campaign.environment_id,
            campaign_id=campaign.campaign_id,
            originating_session_id=originating_session_id,
            child_session_id=made["child_session_id"],
            deliverable=made["deliverable"],
            acceptance_checks=list(made["acceptance_checks"]),
            budget_slice=budget_slice,
            permissions=made["permissions"],
            assignee=made["assignee"],
            remaining=budget_slice,
            generation=made.get("generation", 0),
        )
        self._sessions[made["child_session_id"]] = SessionRecord(
            made["child_session_id"],
            campaign.campaign_id,
            permissions=made["permissions"],
            depth=origin.depth + 1,
            request_id=request_id,
        )
        return self._view(self._requests[request_id])

    def available_to(self, session_id: str) -> int:
        """What a session may still hand out (a root: its campaign's available budget; a
        child: what is left of its slice, WR-1), so that a harness can ask for affordable slices."""
        return self._available_to(self._sessions[session_id])

    def remaining_of(self, session_id: str) -> int:
        """What is left of the slice of the request a child session serves (a root: its
        campaign's available budget), whichever reading of WR-1 the model follows."""
        session = self._sessions[session_id]
        if session.request_id is None:
            return self._campaigns[session.campaign_id].available
        return self._requests[session.request_id].remaining

    # -- lease -----------------------------------------------------------------
    def claim_refusals(self, request_id: str, holder: str) -> Refusals:
        """Every refusal that applies to a claim.

        LEASE_HELD is one the live holder itself may be spared: it may instead
        be answered with the lease it holds (see `held_by`).
        """
        request = self._requests.get(request_id)
        if request is None:
            return frozenset({ErrorCode.NOT_FOUND})
        outsider = holder not in self._members[request.environment_id]
        not_assignee = request.assignee not in (None, holder)
        forbidden = (outsider or not_assignee) and self.reads("WR-6", "outsider-forbidden")
        return applying(
            (outsider, ErrorCode.NOT_FOUND),
            (not_assignee, ErrorCode.NOT_ASSIGNEE),
            (forbidden, ErrorCode.FORBIDDEN),
            (request.completion is not None, ErrorCode.ALREADY_COMPLETED),
            (self._live(request), ErrorCode.LEASE_HELD),
        )

    def held_by(self, request_id: str, holder: str) -> Lease | None:
        """The live lease `holder` holds on the request, which claiming again may answer."""
        request = self._requests[request_id]
        if self._live(request) and request.holder == holder:
            return request.lease()
        return None

    def claim(
        self,
        request_id: str,
        holder: str,
        *,
        generation: int | None = None,
        expires_at: datetime | None = None,
    ) -> Lease:
        """Record a new grant: the implementation's generation and expiry, or WR-7's reading."""
        request = self._requests[request_id]
        refusals = self.claim_refusals(request_id, holder)
        if self.held_by(request_id, holder) is not None:
            refusals -= {ErrorCode.LEASE_HELD}
        if refusals:
            raise ValueError(f"the claim must be refused: {sorted(refusals)}")
        request.generation = request.generation + 1 if generation is None else generation
        request.claimed = True
        request.holder = holder
        request.expires_at = self.fresh_expiry() if expires_at is None else expires_at
        return request.lease()

    def regenerate(self, request_id: str, generation: int) -> Lease:
        """Record a heartbeat that renewed the lease under a newer generation (WR-7 read as
        heartbeat-regenerates): the holder fences with it from now on."""
        request = self._requests[request_id]
        request.generation = generation
        return request.lease()

    def heartbeat_refusals(self, request_id: str, holder: str, generation: int) -> Refusals:
        """Every refusal that applies to a heartbeat."""
        request = self._requests.get(request_id)
        if request is None:
            return frozenset({ErrorCode.NOT_FOUND})
        fence = self._fence(request, holder, generation)
        if fence == {ErrorCode.LEASE_EXPIRED} and self.reads("WR-19", "renews-expired"):
            return ACCEPTED
        return fence

    def extend(self, request_id: str, expires_at: datetime | None = None) -> Lease:
        """Record a renewal of the current lease: to `expires_at`, or a lease duration from now."""
        request = self._requests[request_id]
        renewable = self._live(request) or (
            request.claimed and request.completion is None and self.reads("WR-19", "renews-expired")
        )
        if not renewable:
            raise ValueError(f"{request_id} holds no live lease to extend")
        request.expires_at = self.fresh_expiry() if expires_at is None else expires_at
        return request.lease()

    def publish_refusals(
        self, request_id: str, holder: str, generation: int, result_ref: str
    ) -> Refusals:
        """Every refusal that applies to a publish (an exact retry is `recorded_retry`'s)."""
        request = self._requests.get(request_id)
        if request is None:
            return applying((not result_ref, ErrorCode.INVALID_INPUT), (True, ErrorCode.NOT_FOUND))
        fence = self._fence(request, holder, generation)
        return fence | applying((not result_ref, ErrorCode.INVALID_INPUT))

    def recorded_retry(
        self, request_id: str, holder: str, generation: int, result_ref: str
    ) -> Completion | None:
        """The recorded completion, when a publish repeats it exactly (WR-10 answers it)."""
        request = self._requests.get(request_id)
        recorded = request.completion if request is not None else None
        if recorded is None:
            return None
        if (recorded.holder, recorded.generation, recorded.result_ref) != (
            holder,
            generation,
            result_ref,
        ):
            return None
        return recorded

    def complete(
        self,
        request_id: str,
        holder: str,
        generation: int,
        result_ref: str,
        *,
        completed_at: datetime | None = None,
    ) -> Completion:
        """Record an accepted publish; the unspent slice goes back (WR-1, WR-3, WR-15)."""
        refusals = self.publish_refusals(request_id, holder, generation, result_ref)
        if refusals:
            raise ValueError(f"the publish must be refused: {sorted(refusals)}")
        request = self._requests[request_id]
        returned = 0 if self.reads("WR-3", "forfeit") else request.remaining
        self._give_back(request)
        request.completion = Completion(
            request_id=request_id,
            holder=holder,
            generation=generation,
            result_ref=result_ref,
            completed_at=self.now if completed_at is None else completed_at,
            budget_returned=returned,
        )
        return request.completion

    # -- budget ----------------------------------------------------------------
    def usage_refusals(self, session_id: str, amount: int) -> Refusals:
        """Every refusal that applies to recording usage."""
        free = amount == 0 and self.reads("WR-24", "zero-usage-accepted")
        bad_input = amount < 1 and not free
        session = self._sessions.get(session_id)
        if session is None:
            return applying((bad_input, ErrorCode.INVALID_INPUT), (True, ErrorCode.NOT_FOUND))
        if free:
            return ACCEPTED
        if session.request_id is None:
            if self.reads("WR-14", "root-usage-refused"):
                return ROOT_USAGE_REFUSALS
            available = self._campaigns[session.campaign_id].available
            return applying(
                (bad_input, ErrorCode.INVALID_INPUT),
                (amount > available, ErrorCode.INSUFFICIENT_BUDGET),
            )
        request = self._requests[session.request_id]
        capped = self.reads("WR-2", "capped-usage")
        return applying(
            (bad_input, ErrorCode.INVALID_INPUT),
            (request.completion is not None, ErrorCode.ALREADY_COMPLETED),
            (amount > request.remaining and not capped, ErrorCode.USAGE_EXCEEDS_SLICE),
        )

    def record_usage(self, session_id: str, amount: int) -> int:
        """Record accepted usage: a root's from the campaign (WR-14), a child's from its slice
        (read as capped-usage, only up to what is left of it); what was charged."""
        refusals = self.usage_refusals(session_id, amount)
        if refusals:
            raise ValueError(f"the usage must be refused: {sorted(refusals)}")
        session = self._sessions[session_id]
        if session.request_id is None:
            campaign = self._campaigns[session.campaign_id]
            campaign.available -= amount
            campaign.root_spent += amount
            return amount
        request = self._requests[session.request_id]
        charged = min(amount, request.remaining)
        request.remaining -= charged
        request.spent += charged
        return charged

    def closed_at(self, request_id: str, instant: datetime) -> None:
        """Record when a completion nobody saw acknowledged was recorded, as the request reads."""
        request = self._requests[request_id]
        if request.completion is None:
            raise ValueError(f"{request_id} has not completed")
        request.completion = request.completion.model_copy(update={"completed_at": instant})

    def completion_of(self, request_id: str) -> Completion | None:
        """The completion recorded for the request, if it has completed."""
        request = self._requests.get(request_id)
        return None if request is None else request.completion

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

    # -- adoption ----------------------------------------------------------------
    def adopt_request(self, view: WorkRequest) -> None:
        """Take the request's spending, lease and completion as the implementation reads them,
        after a check found a clause broken, so the model goes on from the implementation's
        state. What was delegated (fields, slice, grants) stays as asked: a break of it recurs
        under the same clause. A completion the model recorded and the implementation does not
        show stays recorded: what it returned cannot be taken back from a read."""
        request = self._requests[view.request_id]
        request.remaining -= view.budget_spent - request.spent
        request.spent = view.budget_spent
        lease = view.lease
        request.holder, request.generation = lease.holder, lease.generation
        if view.state is not RequestState.COMPLETED:
            request.expires_at = lease.expires_at
        request.claimed = request.claimed or lease.holder is not None
        if view.state is RequestState.COMPLETED and request.completion is None:
            request.completion = Completion(
                request_id=request.request_id,
                holder=lease.holder or "",
                generation=lease.generation,
                result_ref=view.result_ref or "",
                completed_at=lease.closed_at or self.now,
                budget_returned=request.remaining,
            )
            request.remaining = 0

    def adopt_budget(self, snapshot: BudgetSnapshot) -> None:
        """Take the campaign's available and its roots' spending as the implementation reads
        them (what is reserved follows from its requests)."""
        campaign = self._campaigns[snapshot.campaign_id]
        campaign.available = snapshot.available
        requests = (r for r in self._requests.values() if r.campaign_id == snapshot.campaign_id)
        campaign.root_spent = snapshot.spent - sum(r.spent for r in requests)

    # -- observation -------------------------------------------------------------
    def get_request(self, request_id: str) -> WorkRequest | ErrorCode:
        request = self._requests.get(request_id)
        if request is None:
            return ErrorCode.NOT_FOUND
        return self._view(request)

    def listing_refusals(self, environment_id: str, principal: str) -> Refusals:
        """A non-member, or anyone asking for an unknown environment, is refused alike (WR-11)."""
        members = self._members.get(environment_id, set())
        return applying((principal not in members, ErrorCode.NOT_FOUND))

    def list_requests(self, environment_id: str, principal: str) -> list[WorkRequest] | ErrorCode:
        """The environment's open and in-progress requests (WR-17), in no particular order."""
        if self.listing_refusals(environment_id, principal):
            return ErrorCode.NOT_FOUND
        views = (
            self._view(r) for r in self._requests.values() if r.environment_id == environment_id
        )
        return [view for view in views if view.state is not RequestState.COMPLETED]

    def may_list_completed(self) -> bool:
        """Whether a listing may also hold completed requests (WR-17 read as completed-listed)."""
        return self.reads("WR-17", "completed-listed")

    # -- internals ---------------------------------------------------------------
    def _available_to(self, origin: SessionRecord) -> int:
        """What a session may hand out: its campaign's available, or its request's remaining
        (WR-1; the campaign's for every session, read as from-campaign)."""
        if origin.request_id is None or self.reads("WR-1", "from-campaign"):
            return self._campaigns[origin.campaign_id].available
        return self._requests[origin.request_id].remaining

    def _draw(self, origin: SessionRecord, amount: int) -> None:
        if origin.request_id is None or self.reads("WR-1", "from-campaign"):
            self._campaigns[origin.campaign_id].available -= amount
        else:
            self._requests[origin.request_id].remaining -= amount

    def _give_back(self, request: RequestRecord) -> None:
        """Hand a completing request's remaining to its nearest open ancestor, else the campaign.

        Read as from-campaign (WR-1), every slice came out of the campaign, so every remainder
        goes back there: given to an ancestor, it would let that one spend beyond its slice.
        """
        amount, request.remaining = request.remaining, 0
        if self.reads("WR-3", "forfeit"):
            return
        session = self._sessions[request.originating_session_id]
        while session.request_id is not None and not self.reads("WR-1", "from-campaign"):
            ancestor = self._requests[session.request_id]
            if ancestor.completion is None:
                ancestor.remaining += amount
                return
            if self.reads("WR-15", "lost-past-completed"):
                return
            if self.reads("WR-15", "to-campaign"):
                break
            session = self._sessions[ancestor.originating_session_id]
        self._campaigns[request.campaign_id].available += amount

    def _live(self, request: RequestRecord) -> bool:
        return (
            request.completion is None
            and request.expires_at is not None
            and self.now < request.expires_at
        )

    def _fence(self, request: RequestRecord, holder: str, generation: int) -> Refusals:
        """Every refusal of a heartbeat or publish by someone not holding the current live lease.

        A stranger to the environment may be told the request is not found; a
        pair that is not the newest grant is stale; no live lease (never
        claimed, expired, or closed by completion) is an expired one.
        """
        current = request.claimed and (request.holder, request.generation) == (holder, generation)
        return applying(
            (holder not in self._members[request.environment_id], ErrorCode.NOT_FOUND),
            (request.completion is not None, ErrorCode.ALREADY_COMPLETED),
            (not current, ErrorCode.STALE_GENERATION),
            (not self._live(request), ErrorCode.LEASE_EXPIRED),
        )

    def _state(self, request: RequestRecord) -> RequestState:
        if request.completion is not None:
            return RequestState.COMPLETED
        if self._live(request):
            return RequestState.IN_PROGRESS
        lapsed = request.claimed and self.reads("WR-20", "in-progress-until-claimed")
        return RequestState.IN_PROGRESS if lapsed else RequestState.OPEN

    def lapsed(self, request_id: str) -> bool:
        """Whether the request was claimed and its lease has expired, uncompleted: the state it
        then reads is WR-20's reading (open again, or in progress until claimed)."""
        request = self._requests[request_id]
        return request.claimed and request.completion is None and not self._live(request)

    def _view(self, request: RequestRecord) -> WorkRequest:
        return WorkRequest(
            request_id=request.request_id,
            kind=request.kind,
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
            lease=request.lease(),
            state=self._state(request),
            result_ref=request.completion.result_ref if request.completion else None,
        )
