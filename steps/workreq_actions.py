"""Work-request setup and actions (REQ-ARMONIA-WORKREQ-001): the Given and When steps.

A Given step builds state the scenario rests on and fails at once, naming the
clause, when the implementation refuses it. A When step acts: a refusal of an
action the scenario needs waits for the next Then step (see
`WorkRequestWorld.perform`); a `tries to` step expects nothing and keeps the
outcome for the Then step that judges it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pytest_bdd import given, parsers, when

from conformance.driver import (
    DelegationKind,
    DriverError,
    ErrorCode,
    Lease,
    Permissions,
    RequestState,
    WorkRequest,
)
from conformance.oracle.work_request_cites import (
    KIND_CREATES,
)
from conformance.spec.clause_check import (
    Cite,
    PortViolation,
    expect,
    scenario_value,
)
from conformance.steps.common import READING, quoted
from conformance.steps.workreq_world import (
    UNKNOWN_REQUEST,
    WorkRequestWorld,
)

DEFAULT_DELIVERABLE = "a short written summary"
DEFAULT_CHECKS = ["the summary names its sources"]


# --------------------------------------------------------------------------
# Phrases
# --------------------------------------------------------------------------


def name_list(text: str) -> frozenset[str]:
    """A comma-separated grant list; the empty string is the empty set."""
    return frozenset(part.strip() for part in text.split(",") if part.strip())


_GRANTS = re.compile(r'(?:tools "(?P<tools>[^"]*)")?(?: and )?(?:devices "(?P<devices>[^"]*)")?')


def parse_grants(text: str | None) -> Permissions:
    """Read `tools "a, b" and devices "c"`, `tools "a"`, `devices "c"` or `nothing`."""
    if text is None or text == "nothing":
        return Permissions()
    match = scenario_value(_GRANTS.fullmatch(text) if text else None, f"not a grant list: {text!r}")
    return Permissions(
        tools=name_list(match["tools"] or ""), devices=name_list(match["devices"] or "")
    )


def setup(what: str, action: Callable[[], object]) -> None:
    """Environments, campaigns and root sessions are the spec's assumptions, not its subject:
    an implementation that refuses them cannot be tested at all."""
    try:
        action()
    except DriverError as error:
        raise PortViolation(f"{what} was refused: {error}") from error


# --------------------------------------------------------------------------
# Setup
# --------------------------------------------------------------------------


@given(parsers.re(r'an environment "(?P<environment>[^"]+)" whose members are (?P<members>.+)'))
def environment_with_members(
    workreq_world: WorkRequestWorld, environment: str, members: str
) -> None:
    names = quoted(members)
    setup(
        f"environment {environment!r}",
        lambda: workreq_world.driver.create_environment(environment, names),
    )
    workreq_world.environments[environment] = names


@given(
    parsers.re(
        r'a campaign "(?P<campaign>[^"]+)" in "(?P<environment>[^"]+)"'
        r" with a budget of (?P<budget>\d+)"
    )
)
def campaign_with_budget(
    workreq_world: WorkRequestWorld, campaign: str, environment: str, budget: str
) -> None:
    driver = workreq_world.driver
    setup(
        f"campaign {campaign!r}",
        lambda: driver.create_campaign(campaign, environment, int(budget)),
    )
    workreq_world.campaigns[campaign] = int(budget)


@given(
    parsers.re(
        r'a root session "(?P<session>[^"]+)" of "(?P<principal>[^"]+)" in "(?P<campaign>[^"]+)"'
        r" granting (?P<grants>.+)"
    )
)
def root_session(
    workreq_world: WorkRequestWorld, session: str, principal: str, campaign: str, grants: str
) -> None:
    permissions = parse_grants(grants)
    driver = workreq_world.driver
    setup(
        f"root session {session!r}",
        lambda: driver.create_session(session, campaign, principal, permissions),
    )
    workreq_world.session_permissions[session] = permissions


# --------------------------------------------------------------------------
# Delegation
# --------------------------------------------------------------------------

ORIGIN = r'(?P<origin>session "[^"]+"|the child session of "[^"]+"|the deepest child session)'
_DELEGATION_TAIL = (
    r' "(?P<name>[^"]+)" by (?P<kind>spawn|subagent) with a slice of (?P<budget_slice>-?\d+)'
    r'(?: granting (?P<grants>.+?))?(?: for "(?P<assignee>[^"]*)")?'
    r'(?: to deliver "(?P<deliverable>[^"]*)")?'
)


def delegation(
    world: WorkRequestWorld,
    origin: str,
    kind: str,
    budget_slice: str | int,
    grants: str | None = None,
    assignee: str | None = None,
    deliverable: str | None = None,
) -> Callable[[], WorkRequest]:
    originating = world.session_id(origin)
    return lambda: world.driver.delegate(
        DelegationKind(kind),
        originating,
        deliverable=DEFAULT_DELIVERABLE if deliverable is None else deliverable,
        acceptance_checks=DEFAULT_CHECKS,
        budget_slice=int(budget_slice),
        permissions=parse_grants(grants),
        assignee=assignee,
    )


def creation_clauses(kind: str) -> tuple[str, str]:
    return "AC-ARMONIA-WORKREQ-001.1/creates-request", KIND_CREATES[DelegationKind(kind)]


READING_REFUSALS = {"WR-4": ErrorCode.COUNT_CAP, "WR-18": ErrorCode.COUNT_CAP}
"""The one refusal of a needed delegation each reading answers for: refused otherwise, the
delegation still breaks the creation clauses."""


def needed_delegation(kind: str, reading: str | None) -> Cite | Callable[[DriverError], Cite]:
    """Why a delegation the scenario needs must be accepted: the creation clauses, unless a
    reading the step names answers for the refusal it met."""
    if reading is None:
        return creation_clauses(kind)
    answered = scenario_value(
        READING_REFUSALS.get(reading), f"{reading} answers for no refusal of a delegation"
    )
    return lambda error: reading if error.code is answered else creation_clauses(kind)


@given(parsers.re(ORIGIN + " has delegated" + _DELEGATION_TAIL))
def has_delegated(
    workreq_world: WorkRequestWorld,
    origin: str,
    name: str,
    kind: str,
    budget_slice: str,
    grants: str | None,
    assignee: str | None,
    deliverable: str | None,
) -> None:
    """A setup the scenario rests on: accepted, and made as asked (kind, slice, open)."""
    action = delegation(workreq_world, origin, kind, budget_slice, grants, assignee, deliverable)
    request = workreq_world.build(f"the delegation of {name!r}", creation_clauses(kind), action)
    made = (request.kind, request.budget_slice, request.state)
    asked = (DelegationKind(kind), int(budget_slice), RequestState.OPEN)
    expect(
        made == asked,
        creation_clauses(kind),
        f"setting up, {name!r} was asked as (kind, slice, state) {asked}, it was made {made}",
    )
    workreq_world.remember_request(name, request)


@when(parsers.re(READING + ORIGIN + " delegates" + _DELEGATION_TAIL))
def delegates(
    workreq_world: WorkRequestWorld,
    reading: str | None,
    origin: str,
    name: str,
    kind: str,
    budget_slice: str,
    grants: str | None,
    assignee: str | None,
    deliverable: str | None,
) -> None:
    action = delegation(workreq_world, origin, kind, budget_slice, grants, assignee, deliverable)
    needed = needed_delegation(kind, reading)
    request = workreq_world.perform("delegate", f"the delegation of {name!r}", needed, action)
    if request is not None:
        workreq_world.remember_request(name, request)


@when(parsers.re(ORIGIN + " tries to delegate" + _DELEGATION_TAIL))
def tries_to_delegate(
    workreq_world: WorkRequestWorld,
    origin: str,
    name: str,
    kind: str,
    budget_slice: str,
    grants: str | None,
    assignee: str | None,
    deliverable: str | None,
) -> None:
    action = delegation(workreq_world, origin, kind, budget_slice, grants, assignee, deliverable)
    workreq_world.attempted_from = workreq_world.session_id(origin)
    request = workreq_world.attempt("delegate", f"the delegation of {name!r}", action)
    if request is not None:
        workreq_world.remember_request(name, request)


@when(parsers.re(r'session "(?P<session>[^"]+)" delegates "(?P<name>[^"]+)" as follows:'))
def delegates_as_follows(
    workreq_world: WorkRequestWorld, session: str, name: str, datatable: list[list[str]]
) -> None:
    rows = {key.strip(): value.strip() for key, value in datatable}
    kind = DelegationKind(rows["kind"])
    request = workreq_world.perform(
        "delegate",
        f"the delegation of {name!r}",
        creation_clauses(kind),
        lambda: workreq_world.driver.delegate(
            kind,
            session,
            deliverable=rows["deliverable"],
            acceptance_checks=[check.strip() for check in rows["acceptance checks"].split(";")],
            budget_slice=int(rows["budget slice"]),
            permissions=Permissions(
                tools=name_list(rows["tools"]), devices=name_list(rows["devices"])
            ),
            assignee=rows.get("assignee") or None,
        ),
    )
    if request is not None:
        workreq_world.remember_request(name, request)


@given(
    parsers.re(
        r'a chain of (?P<kind>spawn|subagent) delegations from session "(?P<session>[^"]+)"'
        r" reaching the depth cap"
    )
)
def chain_to_depth_cap(workreq_world: WorkRequestWorld, kind: str, session: str) -> None:
    """Levels 1 .. max_depth, each delegated from the previous level's child session.

    Slices shrink by one per level so that every level fits in its parent's
    remainder and the deepest level still has one unit left to delegate.
    """
    depth_cap = workreq_world.limits().max_depth
    origin = f'session "{session}"'
    for level in range(1, depth_cap + 1):
        name = f"level {level}"
        request = workreq_world.build(
            f"delegation {level} of a chain as deep as the depth cap {depth_cap}",
            ("AC-ARMONIA-WORKREQ-001.8/depth-cap", KIND_CREATES[DelegationKind(kind)]),
            delegation(workreq_world, origin, kind, depth_cap + 2 - level),
        )
        workreq_world.remember_request(name, request)
        workreq_world.chain.append(name)
        origin = f'the child session of "{name}"'


@given(
    parsers.re(
        r'session "(?P<session>[^"]+)" has delegated as many requests as the count cap allows'
        r"(?P<but_one>, but one)?"
    )
)
def delegations_up_to_count_cap(
    workreq_world: WorkRequestWorld, session: str, but_one: str | None
) -> None:
    count_cap = workreq_world.limits().max_children_per_session
    for index in range(1, count_cap + (0 if but_one else 1)):
        request = workreq_world.build(
            f"delegation {index} of {count_cap} the count cap allows",
            "AC-ARMONIA-WORKREQ-001.8/count-cap",
            delegation(workreq_world, f'session "{session}"', "spawn", 1),
        )
        workreq_world.remember_request(f"sibling {index}", request)


# --------------------------------------------------------------------------
# Claim, heartbeat, publish
# --------------------------------------------------------------------------


def claim_clause(world: WorkRequestWorld, name: str) -> str:
    """A request whose lease was granted before is claimable again; a fresh one is claimed
    under a fenced lease."""
    claimed_before = any(key[0] == name for key in world.leases)
    return (
        "AC-ARMONIA-WORKREQ-001.4/claimable-again"
        if claimed_before
        else "AC-ARMONIA-WORKREQ-001.7/fenced"
    )


def claim(world: WorkRequestWorld, holder: str, name: str) -> Callable[[], Lease]:
    request_id = world.request_id(name)
    return lambda: world.driver.claim(request_id, holder)


@given(parsers.re(r'"(?P<holder>[^"]+)" has claimed "(?P<name>[^"]+)"'))
def has_claimed(workreq_world: WorkRequestWorld, holder: str, name: str) -> None:
    lease = workreq_world.build(
        f"{holder!r}'s claim of {name!r}",
        claim_clause(workreq_world, name),
        claim(workreq_world, holder, name),
    )
    workreq_world.remember_lease(name, holder, lease)


@when(parsers.re(r'"(?P<holder>[^"]+)" claims "(?P<name>[^"]+)"'))
def claims(workreq_world: WorkRequestWorld, holder: str, name: str) -> None:
    lease = workreq_world.perform(
        "claim",
        f"{holder!r}'s claim of {name!r}",
        claim_clause(workreq_world, name),
        claim(workreq_world, holder, name),
    )
    if lease is not None:
        workreq_world.remember_lease(name, holder, lease)


@when(parsers.re(r'"(?P<holder>[^"]+)" tries to claim "(?P<name>[^"]+)"'))
def tries_to_claim(workreq_world: WorkRequestWorld, holder: str, name: str) -> None:
    lease = workreq_world.attempt(
        "claim", f"{holder!r}'s claim of {name!r}", claim(workreq_world, holder, name)
    )
    if lease is not None:
        workreq_world.remember_lease(name, holder, lease)


@when(parsers.re(r'"(?P<holder>[^"]+)" tries to claim a request that does not exist'))
def tries_to_claim_unknown(workreq_world: WorkRequestWorld, holder: str) -> None:
    workreq_world.attempt(
        "claim",
        "a claim of an unknown request",
        lambda: workreq_world.driver.claim(UNKNOWN_REQUEST, holder),
    )


_FENCE = (
    r"(?: (?P<fence>under his lease|under her lease|under his first lease"
    r"|one generation ahead of his lease|at generation \d+"
    r'|under the lease "[^"]+" was granted))?'
)


def presented_generation(
    world: WorkRequestWorld, holder: str, name: str, phrase: str | None
) -> int:
    """The generation a heartbeat or publish presents, as the step phrases it."""
    if phrase is None or phrase in ("under his lease", "under her lease"):
        return world.granted(name, holder).generation
    if phrase == "under his first lease":
        return world.first_grant(name, holder).generation
    if phrase == "one generation ahead of his lease":
        return world.granted(name, holder).generation + 1
    if phrase.startswith("at generation "):
        return int(phrase.removeprefix("at generation "))
    other = quoted(phrase)[0]
    return world.granted(name, other).generation


def heartbeat(world: WorkRequestWorld, holder: str, name: str) -> None:
    generation = world.granted(name, holder).generation
    request_id = world.request_id(name)
    lease = world.perform(
        "heartbeat",
        f"{holder!r}'s heartbeat on {name!r}",
        "AC-ARMONIA-WORKREQ-001.12/heartbeat-extends",
        lambda: world.driver.heartbeat(request_id, holder, generation),
    )
    if lease is not None:
        world.remember_renewal(name, holder, lease)


@when(parsers.re(r'"(?P<holder>[^"]+)" heartbeats "(?P<name>[^"]+)"'))
def heartbeats(workreq_world: WorkRequestWorld, holder: str, name: str) -> None:
    heartbeat(workreq_world, holder, name)


@when(
    parsers.re(
        r'"(?P<holder>[^"]+)" heartbeats "(?P<name>[^"]+)" every half lease duration'
        r" for (?P<count>\d+) lease durations"
    )
)
def heartbeats_repeatedly(
    workreq_world: WorkRequestWorld, holder: str, name: str, count: str
) -> None:
    half = workreq_world.lease_duration() / 2
    for _ in range(2 * int(count)):
        workreq_world.driver.advance_clock(half)
        heartbeat(workreq_world, holder, name)


@when(parsers.re(r'"(?P<holder>[^"]+)" tries to heartbeat "(?P<name>[^"]+)"' + _FENCE))
def tries_to_heartbeat(
    workreq_world: WorkRequestWorld, holder: str, name: str, fence: str | None
) -> None:
    generation = presented_generation(workreq_world, holder, name, fence)
    request_id = workreq_world.request_id(name)
    workreq_world.attempt(
        "heartbeat",
        f"{holder!r}'s heartbeat on {name!r} at generation {generation}",
        lambda: workreq_world.driver.heartbeat(request_id, holder, generation),
    )


def publication(
    world: WorkRequestWorld, holder: str, name: str, result: str
) -> Callable[[], object]:
    generation = world.granted(name, holder).generation
    request_id = world.request_id(name)
    return lambda: world.driver.publish(request_id, holder, generation, result)


@given(
    parsers.re(
        r'"(?P<holder>[^"]+)" has published "(?P<name>[^"]+)" with result "(?P<result>[^"]+)"'
    )
)
def has_published(workreq_world: WorkRequestWorld, holder: str, name: str, result: str) -> None:
    generation = workreq_world.granted(name, holder).generation
    request_id = workreq_world.request_id(name)
    workreq_world.completions[name] = workreq_world.build(
        f"{holder!r}'s publish of {name!r}",
        "AC-ARMONIA-WORKREQ-001.6/records-result",
        lambda: workreq_world.driver.publish(request_id, holder, generation, result),
    )


@when(
    parsers.re(
        r'"(?P<holder>[^"]+)" publishes "(?P<name>[^"]+)" with result "(?P<result>[^"]+)"'
        r"(?P<again> again)?"
    )
)
def publishes(
    workreq_world: WorkRequestWorld, holder: str, name: str, result: str, again: str | None
) -> None:
    generation = workreq_world.granted(name, holder).generation
    request_id = workreq_world.request_id(name)
    completion = workreq_world.perform(
        "publish",
        f"{holder!r}'s {'retried ' if again else ''}publish of {name!r}",
        "WR-10" if again else "AC-ARMONIA-WORKREQ-001.6/records-result",
        lambda: workreq_world.driver.publish(request_id, holder, generation, result),
    )
    if completion is None:
        return
    if again:
        workreq_world.retry = completion
    else:
        workreq_world.completions.setdefault(name, completion)


@when(
    parsers.re(
        r'"(?P<holder>[^"]+)" tries to publish "(?P<name>[^"]+)"'
        + _FENCE
        + r' with result "(?P<result>[^"]+)"'
    )
)
def tries_to_publish(
    workreq_world: WorkRequestWorld, holder: str, name: str, fence: str | None, result: str
) -> None:
    generation = presented_generation(workreq_world, holder, name, fence)
    request_id = workreq_world.request_id(name)
    completion = workreq_world.attempt(
        "publish",
        f"{holder!r}'s publish of {name!r} at generation {generation}",
        lambda: workreq_world.driver.publish(request_id, holder, generation, result),
    )
    if completion is not None:
        workreq_world.completions.setdefault(name, completion)


# --------------------------------------------------------------------------
# Usage and listing
# --------------------------------------------------------------------------

USAGE = r"(?P<origin>session \"[^\"]+\"|the child session of \"[^\"]+\")"


def usage_clause(origin: str) -> str:
    return (
        "WR-14"
        if origin.startswith("session ")
        else "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign"
    )


def usage(world: WorkRequestWorld, origin: str, amount: str) -> tuple[str, Callable[[], None]]:
    """What the usage is called in evidence, and the call that records it."""
    session = world.session_id(origin)
    return f"usage of {amount} by {origin}", lambda: world.driver.record_usage(session, int(amount))


@given(parsers.re(USAGE + r" has recorded usage of (?P<amount>-?\d+)"))
def has_recorded_usage(workreq_world: WorkRequestWorld, origin: str, amount: str) -> None:
    what, action = usage(workreq_world, origin, amount)
    workreq_world.build(what, usage_clause(origin), action)


@when(parsers.re(USAGE + r" records usage of (?P<amount>-?\d+)"))
def records_usage(workreq_world: WorkRequestWorld, origin: str, amount: str) -> None:
    what, action = usage(workreq_world, origin, amount)
    workreq_world.perform("record_usage", what, usage_clause(origin), action)


@when(parsers.re(USAGE + r" tries to record usage of (?P<amount>-?\d+)"))
def tries_to_record_usage(workreq_world: WorkRequestWorld, origin: str, amount: str) -> None:
    what, action = usage(workreq_world, origin, amount)
    workreq_world.attempt("record_usage", what, action)


@when(parsers.re(r'"(?P<principal>[^"]+)" tries to list the requests of "(?P<environment>[^"]+)"'))
def tries_to_list(workreq_world: WorkRequestWorld, principal: str, environment: str) -> None:
    workreq_world.last_listing = (environment, principal)
    workreq_world.attempt(
        "list_requests",
        f"{principal!r}'s listing of {environment!r}",
        lambda: workreq_world.driver.list_requests(environment, principal),
    )
