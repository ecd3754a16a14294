"""What a work-request scenario has done and seen (REQ-ARMONIA-WORKREQ-001).

Requests are named in the feature ("survey", "check") and the implementation
chooses their ids; the scenario's `WorkRequestWorld` maps one to the other and
remembers what later steps need: the leases each claim granted, the completions,
the last attempt and what the store read before it.

When steps only act. An action the scenario needs (a claim, a publish, a
delegation) that the implementation refuses is kept as `unsettled`, and the
next Then step fails with it, citing the clause that required the action to be
accepted: a When step hides no assertion, and no later check runs on a state the
scenario did not reach.

Limits (depth cap, count cap, lease duration) are never assumed: every step
that needs one reads it from the implementation's own description.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar, cast

import pytest

from conformance.adapters.faults import harness_doing
from conformance.applicability import require
from conformance.concurrency.history import Operation, RecordedDriver, operations
from conformance.concurrency.races import RaceVerdict
from conformance.concurrency.work_request_calls import JUDGES
from conformance.driver import (
    BudgetSnapshot,
    Capability,
    Completion,
    Driver,
    DriverError,
    ErrorCode,
    Lease,
    Permissions,
    SessionView,
    WorkRequest,
    WorkRequestLimits,
)
from conformance.oracle.work_request_cites import (
    EXPIRED_STATE,
)
from conformance.spec.clause_check import (
    Cite,
    cites_of,
    port_value,
    scenario_requires,
    scenario_value,
    violated,
)
from conformance.steps.common import BEFORE_RESTART, BEFORE_THEN

T = TypeVar("T")

UNKNOWN_ENVIRONMENT = "environment-that-was-never-created"
UNKNOWN_REQUEST = "request-that-was-never-created"

# --------------------------------------------------------------------------
# Which clause a refusal (or an accepted action) rests on
# --------------------------------------------------------------------------

REFUSAL_CLAUSES: dict[tuple[str, ErrorCode], tuple[str, ...]] = {
    ("delegate", ErrorCode.INSUFFICIENT_BUDGET): ("AC-ARMONIA-WORKREQ-001.9/no-budget-created",),
    ("delegate", ErrorCode.PERMISSION_ESCALATION): ("AC-ARMONIA-WORKREQ-001.2/no-wider-grant",),
    ("delegate", ErrorCode.DEPTH_CAP): ("AC-ARMONIA-WORKREQ-001.8/depth-cap",),
    ("delegate", ErrorCode.COUNT_CAP): ("AC-ARMONIA-WORKREQ-001.8/count-cap",),
    ("delegate", ErrorCode.INVALID_INPUT): ("AC-ARMONIA-WORKREQ-001.1/creates-request",),
    ("delegate", ErrorCode.NOT_FOUND): ("AC-ARMONIA-WORKREQ-001.1/creates-request",),
    ("claim", ErrorCode.LEASE_HELD): ("AC-ARMONIA-WORKREQ-001.7/fenced",),
    ("claim", ErrorCode.NOT_ASSIGNEE): ("WR-6",),
    ("claim", ErrorCode.NOT_FOUND): ("WR-6",),
    ("claim", ErrorCode.ALREADY_COMPLETED): ("AC-ARMONIA-WORKREQ-001.6/closes-once",),
    ("heartbeat", ErrorCode.LEASE_EXPIRED): ("WR-19",),
    ("heartbeat", ErrorCode.STALE_GENERATION): (
        "AC-ARMONIA-WORKREQ-001.12/stale-heartbeat-rejected",
    ),
    ("heartbeat", ErrorCode.ALREADY_COMPLETED): ("AC-ARMONIA-WORKREQ-001.6/closes-once",),
    ("publish", ErrorCode.LEASE_EXPIRED): ("AC-ARMONIA-WORKREQ-001.4/expired-cannot-publish",),
    ("publish", ErrorCode.STALE_GENERATION): ("AC-ARMONIA-WORKREQ-001.7/stale-rejected",),
    ("publish", ErrorCode.ALREADY_COMPLETED): ("AC-ARMONIA-WORKREQ-001.6/closes-once",),
    ("record_usage", ErrorCode.USAGE_EXCEEDS_SLICE): ("WR-2",),
    ("record_usage", ErrorCode.INSUFFICIENT_BUDGET): ("WR-14",),
    ("record_usage", ErrorCode.ALREADY_COMPLETED): ("WR-16",),
    ("record_usage", ErrorCode.INVALID_INPUT): (
        "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
    ),
    ("record_usage", ErrorCode.NOT_FOUND): ("AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",),
    ("list_requests", ErrorCode.NOT_FOUND): ("AC-ARMONIA-WORKREQ-001.5/non-members-cannot",),
}
"""Why an operation must be refused with a code: the clause the refusal keeps."""

WRITES_NOTHING = "WR-4"
"""A refused delegation moves no budget and uses no cap slot (making nothing is its refusal)."""

OBSERVING = (
    "reading every budget, listing, request and session it notes before actions and restarts "
    "(its own read, not the step's action)"
)


def refusal_cites(operation: str, codes: list[ErrorCode]) -> tuple[str, ...]:
    cites = [cite for code in codes for cite in REFUSAL_CLAUSES.get((operation, code), ())]
    return tuple(dict.fromkeys(cites))


# --------------------------------------------------------------------------
# Observation
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Observation:
    """Everything a refusal must leave untouched: budgets, listings, requests and sessions."""

    budgets: dict[str, BudgetSnapshot]
    listings: dict[str, frozenset[str]]
    requests: dict[str, WorkRequest | str]
    """Each request as read, or the refusal reading it met."""
    sessions: dict[str, frozenset[SessionView]]

    def footprint(self) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
        """What exists, leaving out how much: the requests listed and the sessions' ids."""
        sessions = {
            campaign: frozenset(view.session_id for view in views)
            for campaign, views in self.sessions.items()
        }
        return self.listings, sessions

    def differences(self, after: Observation) -> str:
        parts: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
            ("budget", dict(self.budgets), dict(after.budgets)),
            ("listing", dict(self.listings), dict(after.listings)),
            ("request", dict(self.requests), dict(after.requests)),
            ("sessions of", dict(self.sessions), dict(after.sessions)),
        ]
        return "\n".join(
            f"  {kind} {key!r}: before {old[key]!r}, after {new.get(key)!r}"
            for kind, old, new in parts
            for key in old
            if old[key] != new.get(key)
        )


@dataclass(frozen=True)
class Attempt:
    """An operation the scenario tried, and how it ended."""

    operation: str
    what: str
    error: DriverError | None
    before: Observation
    needed: tuple[str, ...] = ()
    """For an action the scenario needs: the clauses that require it to be accepted."""


@dataclass
class Racing:
    """The scenario's last batch made at once: where its calls begin in the scenario's history."""

    name: str
    """The request the batch was about."""
    since: int
    """How many events the history held before the race's first call (its read before)."""
    rooms: dict[str, int] = field(default_factory=dict)
    """What was left of the slice when the batch began, where the scenario knows it (its
    child delegated nothing the scenario made)."""
    verdict: RaceVerdict | None = None
    """The search's verdict on the history as it stood after the race, once a step asked."""


@dataclass
class WorkRequestWorld:
    """Per-scenario memory of the steps: names, leases, completions, the last attempt."""

    driver: Driver
    """The implementation, every work-request call recorded (`recorded`)."""
    recorded: RecordedDriver
    environments: dict[str, list[str]] = field(default_factory=dict)
    campaigns: dict[str, int] = field(default_factory=dict)
    session_permissions: dict[str, Permissions] = field(default_factory=dict)
    requests: dict[str, WorkRequest] = field(default_factory=dict)
    leases: dict[tuple[str, str], list[Lease]] = field(default_factory=dict)
    """Per (request, holder), the leases its claims were granted, oldest first."""
    fences: dict[tuple[str, str], Lease] = field(default_factory=dict)
    completions: dict[str, Completion] = field(default_factory=dict)
    chain: list[str] = field(default_factory=list)
    batch: list[str] = field(default_factory=list)
    late_claims: dict[str, Lease | DriverError] = field(default_factory=dict)
    """How each claim of the batch made after a crash ended, by request name."""
    retry: Completion | None = None
    last: Attempt | None = None
    heartbeat: Attempt | None = None
    """The last heartbeat tried, however it ended: what it showed of its lease's expiry."""
    unsettled: Attempt | None = None
    before_restart: Observation | None = None
    crashed: bool = False
    restarted: bool = False
    renewed: dict[str, Lease] = field(default_factory=dict)
    """The lease each request's latest heartbeat answered."""
    attempted_from: str | None = None
    """The originating session of the last delegation tried."""
    last_listing: tuple[str, str] | None = None
    racing: Racing | None = None

    def race_begins(self) -> int:
        """Where a race about to be made begins in the scenario's history."""
        return len(self.recorded.recorder.events)

    def race_calls(self) -> list[Operation]:
        """The last race's calls, its reads before and after included."""
        racing = scenario_value(self.racing, "no batch was made at once in this scenario")
        return operations(self.recorded.recorder.events[racing.since :])

    # -- names and leases ----------------------------------------------------------
    def request_id(self, name: str) -> str:
        self.settle()
        request = scenario_value(
            self.requests.get(name), f"the scenario never delegated a request named {name!r}"
        )
        return request.request_id

    def name_of(self, request_id: str) -> str:
        """The feature's name for a request id, or the raw id when the scenario never made it."""
        for name, request in self.requests.items():
            if request.request_id == request_id:
                return name
        return request_id

    def granted(self, name: str, holder: str) -> Lease:
        """The lease `holder` was last handed on `name`, by a claim or a heartbeat: the fence
        it presents (a heartbeat may move the generation, WR-7 aside)."""
        self.settle()
        return scenario_value(
            self.fences.get((name, holder)), f"{holder!r} was never granted a lease on {name!r}"
        )

    def claimed(self, name: str, holder: str) -> Lease:
        """The lease `holder`'s latest claim of `name` was granted."""
        self.granted(name, holder)
        return self.leases[(name, holder)][-1]

    def state_cite(self, name: str, state: str) -> str:
        """Why a request must read `state`: a request some claim was granted reads open only
        once its lease expired, which WR-20 names; any other state is the contract's."""
        ever_claimed = any(request == name for request, _ in self.leases)
        return (
            EXPIRED_STATE
            if state == "open" and ever_claimed
            else "AC-ARMONIA-WORKREQ-001.10/contract-fields"
        )

    def first_grant(self, name: str, holder: str) -> Lease:
        self.granted(name, holder)
        return self.leases[(name, holder)][0]

    def remember_lease(self, name: str, holder: str, lease: Lease) -> None:
        """A lease a claim granted."""
        self.leases.setdefault((name, holder), []).append(lease)
        self.fences[(name, holder)] = lease

    def remember_renewal(self, name: str, holder: str, lease: Lease) -> None:
        """A lease a heartbeat answered: the holder presents it from now on."""
        self.renewed[name] = lease
        self.fences[(name, holder)] = lease

    def remember_request(self, name: str, request: WorkRequest) -> None:
        scenario_requires(name not in self.requests, f"the scenario names two requests {name!r}")
        self.requests[name] = request
        self.session_permissions[request.child_session_id] = request.permissions

    def session_id(self, origin: str) -> str:
        """`session "root"`, `the child session of "survey"` or `the deepest child session`."""
        if origin == "the deepest child session":
            scenario_value(self.chain or None, "the scenario built no chain of delegations")
            return self.requests[self.chain[-1]].child_session_id
        child = re.fullmatch(r'the child session of "([^"]+)"', origin)
        if child:
            self.request_id(child[1])
            return self.requests[child[1]].child_session_id
        root = scenario_value(
            re.fullmatch(r'session "([^"]+)"', origin), f"not a session reference: {origin!r}"
        )
        return root[1]

    # -- the implementation's limits -------------------------------------------------
    def limits(self) -> WorkRequestLimits:
        return port_value(
            self.driver.describe().work_requests,
            "the implementation declares work_requests but reports no limits",
        )

    def lease_duration(self) -> timedelta:
        return timedelta(seconds=self.limits().lease_seconds)

    def now(self) -> datetime:
        """The harness clock's current instant (advancing it by nothing)."""
        return self.driver.advance_clock(timedelta())

    # -- observing and attempting ------------------------------------------------------
    def observe(self) -> Observation:
        """The harness's own read of every budget, listing, request and session (a fault in it
        is said to be the harness's read, not the step's action)."""
        with harness_doing(OBSERVING):
            return self._observation()

    def _observation(self) -> Observation:
        driver = self.driver
        return Observation(
            budgets={campaign: driver.budget(campaign) for campaign in self.campaigns},
            listings={
                environment: frozenset(
                    request.request_id for request in driver.list_requests(environment, members[0])
                )
                for environment, members in self.environments.items()
            },
            requests={
                name: self.read_request(request.request_id)
                for name, request in self.requests.items()
            },
            sessions={
                campaign: frozenset(driver.list_sessions(campaign)) for campaign in self.campaigns
            },
        )

    def read_request(self, request_id: str) -> WorkRequest | str:
        """A request as the implementation reads it, or the refusal met reading it."""
        try:
            return self.driver.get_request(request_id)
        except DriverError as error:
            return f"refused: {error}"

    def attempt(self, operation: str, what: str, action: Callable[[], T]) -> T | None:
        """Try an operation that may be refused: remember how it ended and what was there before."""
        self.settle()
        before = self.observe()
        try:
            result = action()
        except DriverError as error:
            self.remember(Attempt(operation, what, error, before))
            return None
        self.remember(Attempt(operation, what, None, before))
        return result

    def remember(self, attempt: Attempt) -> None:
        self.last = attempt
        if attempt.operation == "heartbeat":
            self.heartbeat = attempt

    def perform(
        self,
        operation: str,
        what: str,
        needed: Cite | Callable[[DriverError], Cite],
        action: Callable[[], T],
    ) -> T | None:
        """An action the scenario needs (a When step): a refusal stays unsettled until the next
        Then step, which fails with it, citing `needed` (or what it says for that refusal)."""
        self.settle()
        try:
            return action()
        except DriverError as error:
            cites = cites_of(needed(error) if callable(needed) else needed)
            self.unsettled = Attempt(operation, what, error, self.observe(), cites)
            return None

    def build(self, what: str, needed: Cite, action: Callable[[], T]) -> T:
        """A setup the rest of the scenario rests on (a Given step): refused, it fails here."""
        try:
            return action()
        except DriverError as error:
            raise violated(needed, f"setting up, {what} was refused: {error}") from error

    def settle(self) -> None:
        """Fail with the action the scenario needed and the implementation refused, if any."""
        refused = self.unsettled
        if refused is None or refused.error is None:
            return
        self.unsettled = None
        raise violated(
            refused.needed,
            f"{refused.what} was to be accepted, the implementation refused it: {refused.error}",
            observed=f"refused:{refused.error.code.value}",
        )

    def note_before_restart(self) -> None:
        """Called by the restart step: what every request must read as afterwards (nothing
        can be read from an implementation the harness has just crashed)."""
        if self.unsettled is None and not self.crashed:
            self.before_restart = self.observe()
        self.restarted, self.crashed = True, False


@pytest.fixture
def workreq_world(driver: Driver, request: pytest.FixtureRequest) -> WorkRequestWorld:
    require(driver, Capability.WORK_REQUESTS)
    recorded = RecordedDriver(driver, frozenset(JUDGES))
    world = WorkRequestWorld(cast(Driver, recorded), recorded)
    request.node.stash.setdefault(BEFORE_THEN, []).append(world.settle)
    request.node.stash.setdefault(BEFORE_RESTART, []).append(world.note_before_restart)
    return world
