"""Work-request step definitions (REQ-ARMONIA-WORKREQ-001).

Requests are named in the feature ("survey", "check") and the implementation
chooses their ids; the scenario's `WorkRequestWorld` maps one to the other and
remembers what later steps need (the leases each holder was granted, the first
accepted completion, the last refusal and what the store read before it).

Limits (depth cap, count cap, lease duration) are never assumed: every step
that needs one reads it from the implementation's own description.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import pytest
from pytest_bdd import given, parsers, then, when

from conformance.driver import (
    BudgetSnapshot,
    Capability,
    Completion,
    DelegationKind,
    Driver,
    DriverError,
    ErrorCode,
    Lease,
    Permissions,
    RequestState,
    WorkRequest,
    WorkRequestLimits,
)
from conformance.pytest_plugin import require
from steps.common import parse_duration

T = TypeVar("T")

UNKNOWN_ENVIRONMENT = "environment-that-was-never-created"
UNKNOWN_REQUEST = "request-that-was-never-created"

# --------------------------------------------------------------------------
# Scenario state
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Observation:
    """Everything a refusal must leave untouched: budgets, listings and every request."""

    budgets: dict[str, BudgetSnapshot]
    listings: dict[str, list[WorkRequest]]
    requests: dict[str, WorkRequest]


@dataclass
class WorkRequestWorld:
    """Per-scenario memory of the steps: names, leases, completions, the last attempt."""

    environments: dict[str, list[str]] = field(default_factory=dict)
    campaigns: dict[str, int] = field(default_factory=dict)
    requests: dict[str, WorkRequest] = field(default_factory=dict)
    leases: dict[tuple[str, str], Lease] = field(default_factory=dict)
    completions: dict[str, Completion] = field(default_factory=dict)
    chain: list[str] = field(default_factory=list)
    retry: Completion | None = None
    attempted: bool = False
    last_error: DriverError | None = None
    before: Observation | None = None
    noted: Observation | None = None
    last_listing: tuple[str, str] | None = None

    def request_id(self, name: str) -> str:
        assert name in self.requests, f"the scenario never delegated a request named {name!r}"
        return self.requests[name].request_id

    def name_of(self, request_id: str) -> str:
        """The feature's name for a request id, or the raw id when the scenario never made it."""
        for name, request in self.requests.items():
            if request.request_id == request_id:
                return name
        return request_id

    def lease_of(self, name: str, holder: str) -> Lease:
        key = (name, holder)
        assert key in self.leases, f"{holder!r} was never granted a lease on {name!r}"
        return self.leases[key]


@pytest.fixture
def workreq_world() -> WorkRequestWorld:
    return WorkRequestWorld()


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def limits(driver: Driver) -> WorkRequestLimits:
    reported = driver.describe().work_requests
    assert reported is not None, (
        "expected the implementation to report its work-request limits, observed none"
    )
    return reported


def lease_duration(driver: Driver) -> timedelta:
    return timedelta(seconds=limits(driver).lease_seconds)


def now(driver: Driver) -> datetime:
    """The harness clock's current instant (advancing it by nothing)."""
    return driver.advance_clock(timedelta())


def quoted(text: str) -> list[str]:
    """The quoted words of `"alice", "bob" and "carol"`."""
    return re.findall(r'"([^"]*)"', text)


def name_list(text: str) -> frozenset[str]:
    """A comma-separated grant list; the empty string is the empty set."""
    return frozenset(part.strip() for part in text.split(",") if part.strip())


_GRANTS = re.compile(r'(?:tools "(?P<tools>[^"]*)")?(?: and )?(?:devices "(?P<devices>[^"]*)")?')


def parse_grants(text: str | None) -> Permissions:
    """Read `tools "a, b" and devices "c"`, `tools "a"`, `devices "c"` or `nothing`."""
    if text is None or text == "nothing":
        return Permissions()
    match = _GRANTS.fullmatch(text)
    assert match is not None and text, f"not a grant list: {text!r}"
    return Permissions(
        tools=name_list(match["tools"] or ""), devices=name_list(match["devices"] or "")
    )


def observe(driver: Driver, world: WorkRequestWorld) -> Observation:
    return Observation(
        budgets={campaign: driver.budget(campaign) for campaign in world.campaigns},
        listings={
            environment: driver.list_requests(environment, members[0])
            for environment, members in world.environments.items()
        },
        requests={
            name: driver.get_request(request.request_id) for name, request in world.requests.items()
        },
    )


def attempt(driver: Driver, world: WorkRequestWorld, action: Callable[[], T]) -> T | None:
    """Run an operation that may be refused; remember the refusal and what the store read before."""
    world.before = observe(driver, world)
    world.attempted = True
    try:
        result = action()
    except DriverError as error:
        world.last_error = error
        return None
    world.last_error = None
    return result


def succeed(action: Callable[[], T], what: str) -> T:
    """Run an operation the scenario expects to be accepted."""
    try:
        return action()
    except DriverError as error:
        raise AssertionError(f"expected {what} to be accepted, observed refusal {error}") from error


def describe_differences(before: Observation, after: Observation) -> str:
    lines = [
        f"  {kind} {key!r}: before {old!r}, after {new!r}"
        for kind, old_map, new_map in (
            ("budget", before.budgets, after.budgets),
            ("listing", before.listings, after.listings),
            ("request", before.requests, after.requests),
        )
        for key in old_map
        if (old := old_map[key]) != (new := new_map.get(key))
    ]
    return "\n".join(lines)


def session_id(world: WorkRequestWorld, origin: str) -> str:
    """Resolve `session "root"`, `the child session of "survey"` or `the deepest child session`."""
    if origin == "the deepest child session":
        assert world.chain, "the scenario built no chain of delegations"
        return world.requests[world.chain[-1]].child_session_id
    child = re.fullmatch(r'the child session of "([^"]+)"', origin)
    if child:
        world.request_id(child[1])
        return world.requests[child[1]].child_session_id
    root = re.fullmatch(r'session "([^"]+)"', origin)
    assert root is not None, f"not a session reference: {origin!r}"
    return root[1]


def render(value: object) -> str:
    """A contract field as the feature writes it."""
    if value is None:
        return "<none>"
    if isinstance(value, frozenset):
        return ", ".join(sorted(value))
    if isinstance(value, list):
        return "; ".join(str(item) for item in value)
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, RequestState):
        return value.value
    return str(value)


CONTRACT_FIELDS: dict[str, Callable[[WorkRequest], object]] = {
    "request id": lambda r: r.request_id,
    "environment": lambda r: r.environment_id,
    "campaign": lambda r: r.campaign_id,
    "originating session": lambda r: r.originating_session_id,
    "child session": lambda r: r.child_session_id,
    "deliverable": lambda r: r.deliverable,
    "acceptance checks": lambda r: r.acceptance_checks,
    "budget slice": lambda r: r.budget_slice,
    "budget spent": lambda r: r.budget_spent,
    "tool grants": lambda r: r.permissions.tools,
    "device grants": lambda r: r.permissions.devices,
    "assignee": lambda r: r.assignee,
    "lease holder": lambda r: r.lease.holder,
    "lease generation": lambda r: r.lease.generation,
    "lease expiry": lambda r: r.lease.expires_at,
    "lease closed": lambda r: r.lease.closed_at,
    "state": lambda r: r.state,
    "result reference": lambda r: r.result_ref,
}


def field_matches(expected: str, observed: object) -> bool:
    """`<set>` means present and non-empty, `<none>` absent, anything else the rendered value."""
    if expected == "<set>":
        return observed is not None and render(observed) != ""
    return render(observed) == expected


# --------------------------------------------------------------------------
# Setup
# --------------------------------------------------------------------------


@given(parsers.re(r'an environment "(?P<environment>[^"]+)" whose members are (?P<members>.+)'))
def environment_with_members(
    driver: Driver, workreq_world: WorkRequestWorld, environment: str, members: str
) -> None:
    require(driver, Capability.WORK_REQUESTS)
    names = quoted(members)
    driver.create_environment(environment, names)
    workreq_world.environments[environment] = names


@given(
    parsers.re(
        r'a campaign "(?P<campaign>[^"]+)" in "(?P<environment>[^"]+)"'
        r" with a budget of (?P<budget>\d+)"
    )
)
def campaign_with_budget(
    driver: Driver, workreq_world: WorkRequestWorld, campaign: str, environment: str, budget: str
) -> None:
    driver.create_campaign(campaign, environment, int(budget))
    workreq_world.campaigns[campaign] = int(budget)


@given(
    parsers.re(
        r'a root session "(?P<session>[^"]+)" of "(?P<principal>[^"]+)" in "(?P<campaign>[^"]+)"'
        r" granting (?P<grants>.+)"
    )
)
def root_session(driver: Driver, session: str, principal: str, campaign: str, grants: str) -> None:
    driver.create_session(session, campaign, principal, parse_grants(grants))


# --------------------------------------------------------------------------
# Delegation
# --------------------------------------------------------------------------

DEFAULT_DELIVERABLE = "a short written summary"
DEFAULT_CHECKS = ["the summary names its sources"]

_ORIGIN = r'(?P<origin>session "[^"]+"|the child session of "[^"]+"|the deepest child session)'
_DELEGATION_TAIL = (
    r' "(?P<name>[^"]+)" by (?P<kind>spawn|subagent) with a slice of (?P<budget_slice>-?\d+)'
    r'(?: granting (?P<grants>.+?))?(?: for "(?P<assignee>[^"]*)")?'
    r'(?: to deliver "(?P<deliverable>[^"]*)")?'
)


def delegation(
    driver: Driver,
    world: WorkRequestWorld,
    origin: str,
    kind: str,
    budget_slice: str,
    grants: str | None,
    assignee: str | None,
    deliverable: str | None,
) -> Callable[[], WorkRequest]:
    originating = session_id(world, origin)
    return lambda: driver.delegate(
        DelegationKind(kind),
        originating,
        deliverable=DEFAULT_DELIVERABLE if deliverable is None else deliverable,
        acceptance_checks=DEFAULT_CHECKS,
        budget_slice=int(budget_slice),
        permissions=parse_grants(grants),
        assignee=assignee,
    )


def plain_delegation(
    driver: Driver, kind: DelegationKind, originating: str, budget_slice: int
) -> Callable[[], WorkRequest]:
    """A delegation with the default deliverable, no grants and no assignee."""
    return lambda: driver.delegate(
        kind,
        originating,
        deliverable=DEFAULT_DELIVERABLE,
        acceptance_checks=DEFAULT_CHECKS,
        budget_slice=budget_slice,
        permissions=Permissions(),
        assignee=None,
    )


def remember_request(world: WorkRequestWorld, name: str, request: WorkRequest) -> None:
    assert name not in world.requests, f"the scenario names two requests {name!r}"
    world.requests[name] = request


@given(parsers.re(_ORIGIN + " delegates" + _DELEGATION_TAIL))
@when(parsers.re(_ORIGIN + " delegates" + _DELEGATION_TAIL))
def delegates(
    driver: Driver,
    workreq_world: WorkRequestWorld,
    origin: str,
    name: str,
    kind: str,
    budget_slice: str,
    grants: str | None,
    assignee: str | None,
    deliverable: str | None,
) -> None:
    action = delegation(
        driver, workreq_world, origin, kind, budget_slice, grants, assignee, deliverable
    )
    request = succeed(action, f"the delegation of {name!r}")
    assert request.state == RequestState.OPEN, (
        f"expected a new request to be open, observed {request.state}"
    )
    remember_request(workreq_world, name, request)


@when(parsers.re(_ORIGIN + " tries to delegate" + _DELEGATION_TAIL))
def tries_to_delegate(
    driver: Driver,
    workreq_world: WorkRequestWorld,
    origin: str,
    name: str,
    kind: str,
    budget_slice: str,
    grants: str | None,
    assignee: str | None,
    deliverable: str | None,
) -> None:
    action = delegation(
        driver, workreq_world, origin, kind, budget_slice, grants, assignee, deliverable
    )
    request = attempt(driver, workreq_world, action)
    if request is not None:
        remember_request(workreq_world, name, request)


@when(parsers.re(r'session "(?P<session>[^"]+)" delegates "(?P<name>[^"]+)" as follows:'))
def delegates_as_follows(
    driver: Driver,
    workreq_world: WorkRequestWorld,
    session: str,
    name: str,
    datatable: list[list[str]],
) -> None:
    rows = {key.strip(): value.strip() for key, value in datatable}
    request = succeed(
        lambda: driver.delegate(
            DelegationKind(rows["kind"]),
            session,
            deliverable=rows["deliverable"],
            acceptance_checks=[check.strip() for check in rows["acceptance checks"].split(";")],
            budget_slice=int(rows["budget slice"]),
            permissions=Permissions(
                tools=name_list(rows["tools"]), devices=name_list(rows["devices"])
            ),
            assignee=rows.get("assignee") or None,
        ),
        f"the delegation of {name!r}",
    )
    remember_request(workreq_world, name, request)


@given(
    parsers.re(
        r'a chain of (?P<kind>spawn|subagent) delegations from session "(?P<session>[^"]+)"'
        r" reaching the depth cap"
    )
)
def chain_to_depth_cap(
    driver: Driver, workreq_world: WorkRequestWorld, kind: str, session: str
) -> None:
    """Levels 1 .. max_depth, each delegated from the previous level's child session.

    Slices shrink by one per level so that every level fits in its parent's
    remainder and the deepest level still has one unit left to delegate.
    """
    depth_cap = limits(driver).max_depth
    originating = session
    for level in range(1, depth_cap + 1):
        name = f"level {level}"
        request = succeed(
            plain_delegation(driver, DelegationKind(kind), originating, depth_cap + 2 - level),
            f"delegation {level} of a chain as deep as the depth cap {depth_cap}",
        )
        remember_request(workreq_world, name, request)
        workreq_world.chain.append(name)
        originating = request.child_session_id


@given(
    parsers.re(
        r'session "(?P<session>[^"]+)" has delegated as many requests as the count cap allows'
    )
)
def delegations_up_to_count_cap(
    driver: Driver, workreq_world: WorkRequestWorld, session: str
) -> None:
    count_cap = limits(driver).max_children_per_session
    for index in range(1, count_cap + 1):
        request = succeed(
            plain_delegation(driver, DelegationKind.SPAWN, session, 1),
            f"delegation {index} of {count_cap} allowed by the count cap",
        )
        remember_request(workreq_world, f"sibling {index}", request)


# --------------------------------------------------------------------------
# Claim, heartbeat, publish
# --------------------------------------------------------------------------


def remember_lease(world: WorkRequestWorld, name: str, holder: str, lease: Lease) -> None:
    assert lease.holder == holder, (
        f"expected the lease to name holder {holder!r}, observed {lease.holder!r}"
    )
    world.leases[(name, holder)] = lease


@given(parsers.re(r'"(?P<holder>[^"]+)" claims "(?P<name>[^"]+)"'))
@when(parsers.re(r'"(?P<holder>[^"]+)" claims "(?P<name>[^"]+)"'))
def claims(driver: Driver, workreq_world: WorkRequestWorld, holder: str, name: str) -> None:
    request_id = workreq_world.request_id(name)
    lease = succeed(lambda: driver.claim(request_id, holder), f"{holder!r}'s claim of {name!r}")
    remember_lease(workreq_world, name, holder, lease)


@when(parsers.re(r'"(?P<holder>[^"]+)" tries to claim "(?P<name>[^"]+)"'))
def tries_to_claim(driver: Driver, workreq_world: WorkRequestWorld, holder: str, name: str) -> None:
    request_id = workreq_world.request_id(name)
    lease = attempt(driver, workreq_world, lambda: driver.claim(request_id, holder))
    if lease is not None:
        remember_lease(workreq_world, name, holder, lease)


@when(parsers.re(r'"(?P<holder>[^"]+)" tries to claim a request that does not exist'))
def tries_to_claim_unknown(driver: Driver, workreq_world: WorkRequestWorld, holder: str) -> None:
    attempt(driver, workreq_world, lambda: driver.claim(UNKNOWN_REQUEST, holder))


def expect_renewed(driver: Driver, granted: Lease, renewed: Lease) -> None:
    """A heartbeat keeps holder and generation and moves the expiry to now + lease duration."""
    expected_expiry = now(driver) + lease_duration(driver)
    kept, observed = (granted.holder, granted.generation), (renewed.holder, renewed.generation)
    assert observed == kept, (
        f"expected the heartbeat to keep (holder, generation) {kept}, observed {observed}"
    )
    assert renewed.expires_at == expected_expiry, (
        f"expected the renewed lease to expire at {expected_expiry}, observed {renewed.expires_at}"
    )


def heartbeat_held_lease(driver: Driver, world: WorkRequestWorld, holder: str, name: str) -> None:
    granted = world.lease_of(name, holder)
    renewed = succeed(
        lambda: driver.heartbeat(world.request_id(name), holder, granted.generation),
        f"{holder!r}'s heartbeat on {name!r}",
    )
    expect_renewed(driver, granted, renewed)
    world.leases[(name, holder)] = renewed


@given(parsers.re(r'"(?P<holder>[^"]+)" heartbeats "(?P<name>[^"]+)"'))
@when(parsers.re(r'"(?P<holder>[^"]+)" heartbeats "(?P<name>[^"]+)"'))
def heartbeats(driver: Driver, workreq_world: WorkRequestWorld, holder: str, name: str) -> None:
    heartbeat_held_lease(driver, workreq_world, holder, name)


@when(
    parsers.re(
        r'"(?P<holder>[^"]+)" heartbeats "(?P<name>[^"]+)" every half lease duration'
        r" for (?P<count>\d+) lease durations"
    )
)
def heartbeats_repeatedly(
    driver: Driver, workreq_world: WorkRequestWorld, holder: str, name: str, count: str
) -> None:
    half = lease_duration(driver) / 2
    for _ in range(2 * int(count)):
        driver.advance_clock(half)
        heartbeat_held_lease(driver, workreq_world, holder, name)


@when(
    parsers.re(
        r'"(?P<holder>[^"]+)" tries to heartbeat "(?P<name>[^"]+)"'
        r"(?: at generation (?P<generation>\d+))?"
    )
)
def tries_to_heartbeat(
    driver: Driver, workreq_world: WorkRequestWorld, holder: str, name: str, generation: str | None
) -> None:
    fence = (
        workreq_world.lease_of(name, holder).generation if generation is None else int(generation)
    )
    request_id = workreq_world.request_id(name)
    attempt(driver, workreq_world, lambda: driver.heartbeat(request_id, holder, fence))


def expect_completion(
    driver: Driver, completion: Completion, name: str, holder: str, generation: int, result: str
) -> None:
    observed = (
        completion.holder,
        completion.generation,
        completion.result_ref,
        completion.completed_at,
    )
    expected = (holder, generation, result, now(driver))
    assert observed == expected, (
        f"expected the completion of {name!r} as (holder, generation, result, instant) {expected},"
        f" observed {observed}"
    )


@given(
    parsers.re(r'"(?P<holder>[^"]+)" publishes "(?P<name>[^"]+)" with result "(?P<result>[^"]+)"')
)
@when(
    parsers.re(r'"(?P<holder>[^"]+)" publishes "(?P<name>[^"]+)" with result "(?P<result>[^"]+)"')
)
def publishes(
    driver: Driver, workreq_world: WorkRequestWorld, holder: str, name: str, result: str
) -> None:
    generation = workreq_world.lease_of(name, holder).generation
    request_id = workreq_world.request_id(name)
    completion = succeed(
        lambda: driver.publish(request_id, holder, generation, result),
        f"{holder!r}'s publish of {name!r}",
    )
    expect_completion(driver, completion, name, holder, generation, result)
    workreq_world.completions[name] = completion


@when(
    parsers.re(
        r'"(?P<holder>[^"]+)" publishes "(?P<name>[^"]+)" with result "(?P<result>[^"]+)" again'
    )
)
def publishes_again(
    driver: Driver, workreq_world: WorkRequestWorld, holder: str, name: str, result: str
) -> None:
    generation = workreq_world.lease_of(name, holder).generation
    request_id = workreq_world.request_id(name)
    workreq_world.retry = succeed(
        lambda: driver.publish(request_id, holder, generation, result),
        f"{holder!r}'s exact retry of the publish of {name!r}",
    )


@when(
    parsers.re(
        r'"(?P<holder>[^"]+)" tries to publish "(?P<name>[^"]+)"'
        r"(?: at generation (?P<generation>\d+))?"
        r' with result "(?P<result>[^"]+)"'
    )
)
def tries_to_publish(
    driver: Driver,
    workreq_world: WorkRequestWorld,
    holder: str,
    name: str,
    generation: str | None,
    result: str,
) -> None:
    fence = (
        workreq_world.lease_of(name, holder).generation if generation is None else int(generation)
    )
    request_id = workreq_world.request_id(name)
    completion = attempt(
        driver, workreq_world, lambda: driver.publish(request_id, holder, fence, result)
    )
    if completion is not None and name not in workreq_world.completions:
        workreq_world.completions[name] = completion


# --------------------------------------------------------------------------
# Usage and listing
# --------------------------------------------------------------------------

_USAGE = r"(?P<origin>session \"[^\"]+\"|the child session of \"[^\"]+\")"


@given(parsers.re(_USAGE + r" records usage of (?P<amount>-?\d+)"))
@when(parsers.re(_USAGE + r" records usage of (?P<amount>-?\d+)"))
def records_usage(
    driver: Driver, workreq_world: WorkRequestWorld, origin: str, amount: str
) -> None:
    session = session_id(workreq_world, origin)
    succeed(lambda: driver.record_usage(session, int(amount)), f"usage of {amount} by {origin}")


@when(parsers.re(_USAGE + r" tries to record usage of (?P<amount>-?\d+)"))
def tries_to_record_usage(
    driver: Driver, workreq_world: WorkRequestWorld, origin: str, amount: str
) -> None:
    session = session_id(workreq_world, origin)
    attempt(driver, workreq_world, lambda: driver.record_usage(session, int(amount)))


@when(parsers.re(r'"(?P<principal>[^"]+)" tries to list the requests of "(?P<environment>[^"]+)"'))
def tries_to_list(
    driver: Driver, workreq_world: WorkRequestWorld, principal: str, environment: str
) -> None:
    workreq_world.last_listing = (environment, principal)
    attempt(driver, workreq_world, lambda: driver.list_requests(environment, principal))


# --------------------------------------------------------------------------
# Time measured in lease durations
# --------------------------------------------------------------------------


@given("the lease duration passes")
@when("the lease duration passes")
def lease_duration_passes(driver: Driver) -> None:
    driver.advance_clock(lease_duration(driver))


@given("half the lease duration passes")
@when("half the lease duration passes")
def half_lease_duration_passes(driver: Driver) -> None:
    driver.advance_clock(lease_duration(driver) / 2)


@when(parsers.re(r"(?P<count>\d+) lease durations pass"))
def lease_durations_pass(driver: Driver, count: str) -> None:
    driver.advance_clock(lease_duration(driver) * int(count))


@given(parsers.re(r"(?P<duration>.+) (?P<relation>less|more) than the lease duration passes"))
@when(parsers.re(r"(?P<duration>.+) (?P<relation>less|more) than the lease duration passes"))
def near_lease_duration_passes(driver: Driver, duration: str, relation: str) -> None:
    offset = parse_duration(duration)
    driver.advance_clock(lease_duration(driver) + (offset if relation == "more" else -offset))


# --------------------------------------------------------------------------
# Observations
# --------------------------------------------------------------------------


@then(parsers.re(r'the attempt is refused with "(?P<code>[a-z_]+)" and nothing changes'))
def refused_and_nothing_changes(driver: Driver, workreq_world: WorkRequestWorld, code: str) -> None:
    assert workreq_world.attempted and workreq_world.before is not None, "no attempt was made"
    error = workreq_world.last_error
    assert error is not None, f"expected a refusal {code!r}, observed the operation accepted"
    assert error.code == ErrorCode(code), (
        f"expected refusal {code!r}, observed {error.code.value!r} ({error.message})"
    )
    assert error.definite, f"expected a definite refusal, observed an indeterminate one: {error}"
    after = observe(driver, workreq_world)
    assert after == workreq_world.before, (
        "expected the refused operation to change nothing, observed:\n"
        + describe_differences(workreq_world.before, after)
    )


@then("the refusal reads exactly like listing an environment that does not exist")
def refusal_reads_like_unknown_environment(driver: Driver, workreq_world: WorkRequestWorld) -> None:
    """Compare code and message; the caller's own environment id may differ, nothing else."""
    assert workreq_world.last_listing is not None and workreq_world.last_error is not None, (
        "no refused listing to compare"
    )
    environment, principal = workreq_world.last_listing
    try:
        driver.list_requests(UNKNOWN_ENVIRONMENT, principal)
    except DriverError as unknown:
        refused = workreq_world.last_error
        observed = (
            refused.code,
            re.sub(rf"\b{re.escape(environment)}\b", "<environment>", refused.message),
        )
        expected = (unknown.code, unknown.message.replace(UNKNOWN_ENVIRONMENT, "<environment>"))
        assert observed == expected, (
            f"expected the non-member's refusal to read like an unknown environment's {expected},"
            f" observed {observed}"
        )
    else:
        raise AssertionError(
            "expected listing an environment that does not exist to be refused, observed a list"
        )


@then(
    parsers.re(
        r'the budget of "(?P<campaign>[^"]+)" is (?P<total>\d+) in total,'
        r" (?P<available>\d+) available, (?P<reserved>\d+) reserved and (?P<spent>\d+) spent"
    )
)
def budget_is(
    driver: Driver, campaign: str, total: str, available: str, reserved: str, spent: str
) -> None:
    snapshot = driver.budget(campaign)
    observed = (snapshot.total, snapshot.available, snapshot.reserved, snapshot.spent)
    expected = (int(total), int(available), int(reserved), int(spent))
    assert observed == expected, (
        f"expected budget (total, available, reserved, spent) {expected}, observed {observed}"
    )


@then(parsers.re(r'the budget of "(?P<campaign>[^"]+)" is conserved'))
def budget_is_conserved(driver: Driver, workreq_world: WorkRequestWorld, campaign: str) -> None:
    snapshot = driver.budget(campaign)
    parts = (snapshot.available, snapshot.reserved, snapshot.spent)
    assert snapshot.total == workreq_world.campaigns[campaign], (
        f"expected the total to stay {workreq_world.campaigns[campaign]}, observed {snapshot.total}"
    )
    assert snapshot.total == sum(parts) and min(parts) >= 0, (
        f"expected total {snapshot.total} == available + reserved + spent, none negative;"
        f" observed (available, reserved, spent) {parts}"
    )


STATE_WORDS = {"open": RequestState.OPEN, "in progress": RequestState.IN_PROGRESS}


@then(parsers.re(r'"(?P<name>[^"]+)" is (?P<state>open|in progress)(?: again)?'))
def request_is_in_state(
    driver: Driver, workreq_world: WorkRequestWorld, name: str, state: str
) -> None:
    observed = driver.get_request(workreq_world.request_id(name)).state
    assert observed == STATE_WORDS[state], (
        f"expected {name!r} to be {STATE_WORDS[state]}, observed {observed}"
    )


@then(parsers.re(r'"(?P<holder>[^"]+)" holds "(?P<name>[^"]+)" at generation (?P<generation>\d+)'))
def holds_at_generation(
    driver: Driver, workreq_world: WorkRequestWorld, holder: str, name: str, generation: str
) -> None:
    request = driver.get_request(workreq_world.request_id(name))
    observed = (request.state, request.lease.holder, request.lease.generation)
    expected = (RequestState.IN_PROGRESS, holder, int(generation))
    assert observed == expected, (
        f"expected {name!r} (state, holder, generation) {expected}, observed {observed}"
    )


@then(parsers.re(r'the lease of "(?P<name>[^"]+)" expires one lease duration from now'))
def lease_expires_one_duration_from_now(
    driver: Driver, workreq_world: WorkRequestWorld, name: str
) -> None:
    expected = now(driver) + lease_duration(driver)
    observed = driver.get_request(workreq_world.request_id(name)).lease.expires_at
    assert observed == expected, (
        f"expected the lease of {name!r} to expire at {expected}, observed {observed}"
    )


@then(
    parsers.re(
        r'"(?P<name>[^"]+)" is completed with result "(?P<result>[^"]+)" by "(?P<holder>[^"]+)"'
        r" at generation (?P<generation>\d+)"
    )
)
def completed_with_result(
    driver: Driver,
    workreq_world: WorkRequestWorld,
    name: str,
    result: str,
    holder: str,
    generation: str,
) -> None:
    request = driver.get_request(workreq_world.request_id(name))
    observed = (request.state, request.result_ref, request.lease.holder, request.lease.generation)
    expected = (RequestState.COMPLETED, result, holder, int(generation))
    assert observed == expected, (
        f"expected {name!r} (state, result, holder, generation) {expected}, observed {observed}"
    )
    completion = workreq_world.completions.get(name)
    assert completion is not None, f"no publish of {name!r} was accepted in this scenario"
    assert request.lease.closed_at == completion.completed_at, (
        f"expected the lease closed at the publish instant {completion.completed_at},"
        f" observed {request.lease.closed_at}"
    )


@then(parsers.re(r'the completion of "(?P<name>[^"]+)" returned (?P<amount>\d+)'))
def completion_returned(workreq_world: WorkRequestWorld, name: str, amount: str) -> None:
    completion = workreq_world.completions.get(name)
    assert completion is not None, f"no publish of {name!r} was accepted in this scenario"
    assert completion.budget_returned == int(amount), (
        f"expected the completion of {name!r} to return {amount},"
        f" observed {completion.budget_returned}"
    )


@then(
    parsers.re(
        r'the retry answers with the completion of "(?P<name>[^"]+)" recorded the first time'
    )
)
def retry_answers_recorded_completion(workreq_world: WorkRequestWorld, name: str) -> None:
    recorded = workreq_world.completions.get(name)
    assert recorded is not None and workreq_world.retry is not None, (
        "no publish and retry to compare"
    )
    assert workreq_world.retry == recorded, (
        f"expected the retry to answer {recorded!r}, observed {workreq_world.retry!r}"
    )


@then(
    parsers.re(r'"(?P<name>[^"]+)" has spent (?P<spent>\d+) of its slice of (?P<budget_slice>\d+)')
)
def spent_of_slice(
    driver: Driver, workreq_world: WorkRequestWorld, name: str, spent: str, budget_slice: str
) -> None:
    request = driver.get_request(workreq_world.request_id(name))
    observed = (request.budget_spent, request.budget_slice)
    expected = (int(spent), int(budget_slice))
    assert observed == expected, f"expected {name!r} (spent, slice) {expected}, observed {observed}"


@then(parsers.re(r'"(?P<name>[^"]+)" grants (?P<grants>.+)'))
def request_grants(driver: Driver, workreq_world: WorkRequestWorld, name: str, grants: str) -> None:
    observed = driver.get_request(workreq_world.request_id(name)).permissions
    expected = parse_grants(grants)
    assert observed == expected, f"expected {name!r} to grant {expected}, observed {observed}"


@then(parsers.re(r'"(?P<principal>[^"]+)" lists in "(?P<environment>[^"]+)":'))
def lists_in_environment(
    driver: Driver,
    workreq_world: WorkRequestWorld,
    principal: str,
    environment: str,
    datatable: list[list[str]],
) -> None:
    listed = succeed(
        lambda: driver.list_requests(environment, principal), f"{principal!r}'s listing"
    )
    observed = [
        (workreq_world.name_of(request.request_id), request.state.value) for request in listed
    ]
    expected = [(name, state.replace(" ", "_")) for name, state in datatable[1:]]
    assert observed == expected, f"expected {principal!r} to list {expected}, observed {observed}"


@then(parsers.re(r'"(?P<principal>[^"]+)" lists no requests in "(?P<environment>[^"]+)"'))
def lists_nothing(
    driver: Driver, workreq_world: WorkRequestWorld, principal: str, environment: str
) -> None:
    listed = succeed(
        lambda: driver.list_requests(environment, principal), f"{principal!r}'s listing"
    )
    observed = [workreq_world.name_of(request.request_id) for request in listed]
    assert observed == [], (
        f"expected {principal!r} to list nothing in {environment!r}, observed {observed}"
    )


@then(parsers.re(r'"(?P<name>[^"]+)" reports every contract field as:'))
def reports_contract_fields(
    driver: Driver, workreq_world: WorkRequestWorld, name: str, datatable: list[list[str]]
) -> None:
    request = driver.get_request(workreq_world.request_id(name))
    expected = {field_name.strip(): value.strip() for field_name, value in datatable[1:]}
    missing, unknown = set(CONTRACT_FIELDS) - set(expected), set(expected) - set(CONTRACT_FIELDS)
    assert not missing and not unknown, (
        f"the table must name every contract field;"
        f" missing {sorted(missing)}, unknown {sorted(unknown)}"
    )
    mismatches = {
        field_name: (wanted, render(CONTRACT_FIELDS[field_name](request)))
        for field_name, wanted in expected.items()
        if not field_matches(wanted, CONTRACT_FIELDS[field_name](request))
    }
    assert not mismatches, f"expected vs observed contract fields of {name!r}: {mismatches}"


@then(
    parsers.re(
        r'"(?P<first>[^"]+)" and "(?P<second>[^"]+)" have distinct ids'
        r" and distinct new child sessions"
    )
)
def distinct_ids_and_sessions(workreq_world: WorkRequestWorld, first: str, second: str) -> None:
    one, two = workreq_world.requests[first], workreq_world.requests[second]
    sessions = {one.child_session_id, two.child_session_id, one.originating_session_id}
    assert one.request_id != two.request_id, (
        f"expected distinct request ids, observed {one.request_id!r} twice"
    )
    assert len(sessions) == 3, (
        f"expected two new child sessions distinct from the originator"
        f" {one.originating_session_id!r}, observed {one.child_session_id!r}"
        f" and {two.child_session_id!r}"
    )


@when("an observer notes every request, listing and budget")
def observer_notes(driver: Driver, workreq_world: WorkRequestWorld) -> None:
    workreq_world.noted = observe(driver, workreq_world)


@then("every request, listing and budget reads as noted")
def reads_as_noted(driver: Driver, workreq_world: WorkRequestWorld) -> None:
    assert workreq_world.noted is not None, "the observer noted nothing"
    after = observe(driver, workreq_world)
    assert after == workreq_world.noted, (
        "expected everything to read as noted, observed:\n"
        + describe_differences(workreq_world.noted, after)
    )
