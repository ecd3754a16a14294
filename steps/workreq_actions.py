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
from dataclasses import dataclass
from datetime import timedelta

from pytest_bdd import given, parsers, when

from conformance.driver import (
    Completion,
    ConcurrentCall,
    DelegationKind,
    DriverError,
    ErrorCode,
    Lease,
    Permissions,
    RequestState,
    WorkRequest,
)
from conformance.oracle.work_request_cites import (
    CLAIMABLE_AGAIN,
    CREATES,
    FENCED,
    HEARTBEAT_EXTENDS,
    KIND_CREATES,
    RECORDS_RESULT,
    USAGE_DRAWS,
)
from conformance.spec.clause_check import (
    Cite,
    PortViolation,
    expect,
    scenario_requires,
    scenario_value,
)
from conformance.steps.common import READING, parse_duration, quoted
from conformance.steps.concurrency import crash_during, timed_warm_up
from conformance.steps.workreq_world import (
    UNKNOWN_REQUEST,
    Racing,
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

_ORIGIN = r'(?P<origin>session "[^"]+"|the child session of "[^"]+"|the deepest child session)'
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
    return CREATES, KIND_CREATES[DelegationKind(kind)]


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


@given(parsers.re(_ORIGIN + " has delegated" + _DELEGATION_TAIL))
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


@when(parsers.re(READING + _ORIGIN + " delegates" + _DELEGATION_TAIL))
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


@when(parsers.re(_ORIGIN + " tries to delegate" + _DELEGATION_TAIL))
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
    return CLAIMABLE_AGAIN if claimed_before else FENCED


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
        HEARTBEAT_EXTENDS,
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
        RECORDS_RESULT,
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
        "WR-10" if again else RECORDS_RESULT,
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

_USAGE = r"(?P<origin>session \"[^\"]+\"|the child session of \"[^\"]+\")"


def usage_clause(origin: str) -> str:
    return "WR-14" if origin.startswith("session ") else USAGE_DRAWS


def usage(world: WorkRequestWorld, origin: str, amount: str) -> tuple[str, Callable[[], None]]:
    """What the usage is called in evidence, and the call that records it."""
    session = world.session_id(origin)
    return f"usage of {amount} by {origin}", lambda: world.driver.record_usage(session, int(amount))


@given(parsers.re(_USAGE + r" has recorded usage of (?P<amount>-?\d+)"))
def has_recorded_usage(workreq_world: WorkRequestWorld, origin: str, amount: str) -> None:
    what, action = usage(workreq_world, origin, amount)
    workreq_world.build(what, usage_clause(origin), action)


@when(parsers.re(_USAGE + r" records usage of (?P<amount>-?\d+)"))
def records_usage(workreq_world: WorkRequestWorld, origin: str, amount: str) -> None:
    what, action = usage(workreq_world, origin, amount)
    workreq_world.perform("record_usage", what, usage_clause(origin), action)


@when(parsers.re(_USAGE + r" tries to record usage of (?P<amount>-?\d+)"))
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


# --------------------------------------------------------------------------
# Batches made at once (judged by the linearizability search in the Then steps)
# --------------------------------------------------------------------------


def numbers(text: str) -> list[int]:
    """The numbers of `30`, `30 and 20` or `30, 20 and 10`."""
    return [int(number) for number in re.findall(r"\d+", text)]


def served_request(origin: str) -> str:
    """The request a child session named by a step serves."""
    child = re.fullmatch(r'the child session of "([^"]+)"', origin)
    return scenario_value(child, f"usages made at once are a child's: {origin!r}")[1]


@when(
    parsers.re(
        _USAGE + r" records (?:(?P<count>\d+) usages of (?P<amount>\d+)"
        r"|usages of (?P<amounts>\d+(?:(?:, | and )\d+)*)) at once"
    )
)
def records_usages_at_once(
    workreq_world: WorkRequestWorld,
    origin: str,
    count: str | None,
    amount: str | None,
    amounts: str | None,
) -> None:
    """A child's usages, all in one batch, between two reads of its request; what was left of
    the slice is known when the scenario made no delegation from the child."""
    asked = [int(amount or 0)] * int(count) if count else numbers(amounts or "")
    name = served_request(origin)
    batch = UsageBatch.begin(workreq_world, origin, name)
    workreq_world.driver.run_concurrently(batch.calls(asked))
    batch.end(workreq_world)


@dataclass
class UsageBatch:
    """A child's usages made at once, between a read of the request it serves and reads of it
    and of its campaign's budget; what was left of its slice is known when the scenario made no
    delegation from the child."""

    name: str
    session: str
    request_id: str
    campaign_id: str
    since: int
    rooms: dict[str, int]

    @classmethod
    def begin(cls, world: WorkRequestWorld, origin: str, name: str) -> UsageBatch:
        session, request_id = world.session_id(origin), world.request_id(name)
        since = world.race_begins()
        before = world.driver.get_request(request_id)
        carved = any(r.originating_session_id == session for r in world.requests.values())
        rooms = {} if carved else {request_id: before.budget_slice - before.budget_spent}
        return cls(name, session, request_id, before.campaign_id, since, rooms)

    def calls(self, amounts: list[int]) -> list[ConcurrentCall]:
        return [
            ConcurrentCall(
                operation="record_usage", arguments={"session_id": self.session, "amount": a}
            )
            for a in amounts
        ]

    def end(self, world: WorkRequestWorld) -> None:
        """Read the request and its campaign's budget, so that the search judges both."""
        world.driver.get_request(self.request_id)
        world.driver.budget(self.campaign_id)
        world.racing = Racing(self.name, self.since, self.rooms)


@when(
    parsers.re(
        _USAGE + r" records usages of (?P<amounts>\d+(?:(?:, | and )\d+)*) at once while "
        r'"(?P<holder>[^"]+)" publishes "(?P<name>[^"]+)" with result "(?P<result>[^"]+)"'
    )
)
def spends_while_publishing(
    workreq_world: WorkRequestWorld,
    origin: str,
    amounts: str,
    holder: str,
    name: str,
    result: str,
) -> None:
    """A child's usages and its request's publish by the holder, all in one batch, between two
    reads of the request; the batch's publish is the last call's answer."""
    served = served_request(origin)
    scenario_requires(served == name, f"{origin} serves {served!r}, not {name!r}")
    batch = UsageBatch.begin(workreq_world, origin, name)
    scenario_requires(bool(batch.rooms), f"{origin} delegated: what was left is unknown")
    generation = workreq_world.granted(name, holder).generation
    fence = {"request_id": batch.request_id, "holder": holder, "generation": generation}
    publish = ConcurrentCall(operation="publish", arguments={**fence, "result_ref": result})
    *_, published = workreq_world.driver.run_concurrently([*batch.calls(numbers(amounts)), publish])
    batch.end(workreq_world)
    if published.ok:
        workreq_world.completions.setdefault(name, Completion.model_validate(published.result))


@when(
    parsers.re(
        _USAGE + r" records usages of (?P<amounts>\d+(?:(?:, | and )\d+)*) at once while "
        r'delegating (?P<names>"[^"]+"(?:(?:, | and )"[^"]+")*) by (?P<kind>spawn|subagent) '
        r"with a slice of (?P<budget_slice>\d+)"
    )
)
def spends_while_delegating(
    workreq_world: WorkRequestWorld,
    origin: str,
    amounts: str,
    names: str,
    kind: str,
    budget_slice: str,
) -> None:
    """A child's usages and its own delegations (its own grants, no assignee), all in one batch
    from one slice, between two reads of the request it serves; the delegations made are named
    in the order they were made."""
    name = served_request(origin)
    batch = UsageBatch.begin(workreq_world, origin, name)
    delegation = {
        "kind": DelegationKind(kind),
        "originating_session_id": batch.session,
        "deliverable": DEFAULT_DELIVERABLE,
        "acceptance_checks": DEFAULT_CHECKS,
        "budget_slice": int(budget_slice),
        "permissions": workreq_world.session_permissions[batch.session],
        "assignee": None,
    }
    asked = quoted(names)
    delegations = [ConcurrentCall(operation="delegate", arguments=delegation)] * len(asked)
    outcomes = workreq_world.driver.run_concurrently([*delegations, *batch.calls(numbers(amounts))])
    batch.end(workreq_world)
    made = [outcome for outcome in outcomes[: len(asked)] if outcome.ok]
    for named, outcome in zip(asked, made, strict=False):
        workreq_world.remember_request(named, WorkRequest.model_validate(outcome.result))


@when(
    parsers.re(
        r'the child sessions of (?P<names>"[^"]+"(?:(?:, | and )"[^"]+")*) each record usages of '
        r"(?P<amounts>\d+(?:(?:, | and )\d+)*), all at once"
    )
)
def siblings_spend_at_once(workreq_world: WorkRequestWorld, names: str, amounts: str) -> None:
    """The usages of several requests' children in one batch: each draws on its own slice, and
    every one of them on the campaign's one account."""
    asked = quoted(names)
    sessions = [workreq_world.session_id(f'the child session of "{name}"') for name in asked]
    since = workreq_world.race_begins()
    workreq_world.driver.run_concurrently(
        [
            ConcurrentCall(operation="record_usage", arguments={"session_id": s, "amount": a})
            for s in sessions
            for a in numbers(amounts)
        ]
    )
    workreq_world.racing = Racing(asked[0], since)


@when(
    parsers.re(
        _ORIGIN + r' delegates (?P<names>"[^"]+"(?:(?:, | and )"[^"]+")*) at once, each by '
        r"(?P<kind>spawn|subagent) with a slice of (?P<budget_slice>\d+)"
        r"(?: granting (?P<grants>.+))?"
    )
)
def delegates_at_once(
    workreq_world: WorkRequestWorld,
    origin: str,
    names: str,
    kind: str,
    budget_slice: str,
    grants: str | None,
) -> None:
    """Delegations of one kind and slice in one batch, named in the order they were made: the
    scenario asks only as many as fit together, so every one must be made."""
    arguments = {
        "kind": DelegationKind(kind),
        "originating_session_id": workreq_world.session_id(origin),
        "deliverable": DEFAULT_DELIVERABLE,
        "acceptance_checks": DEFAULT_CHECKS,
        "budget_slice": int(budget_slice),
        "permissions": parse_grants(grants),
        "assignee": None,
    }
    asked = quoted(names)
    outcomes = workreq_world.driver.run_concurrently(
        [ConcurrentCall(operation="delegate", arguments=arguments)] * len(asked)
    )
    made = [WorkRequest.model_validate(outcome.result) for outcome in outcomes if outcome.ok]
    refused = [f"{outcome.error}: {outcome.message}" for outcome in outcomes if not outcome.ok]
    expect(
        not refused,
        creation_clauses(kind),
        f"{len(asked)} delegations that fit together were made at once; refused: {refused}",
    )
    for name, request in zip(asked, made, strict=True):
        workreq_world.remember_request(name, request)


@when(
    parsers.re(
        r'session "(?P<session>[^"]+)" delegates more requests at once than the count cap '
        r"allows, each by (?P<kind>spawn|subagent) with a slice of (?P<budget_slice>\d+)"
    )
)
def delegates_past_count_cap_at_once(
    workreq_world: WorkRequestWorld, session: str, kind: str, budget_slice: str
) -> None:
    """The count cap's delegations and up to four more, with the session's own grants, in one
    batch (the cap is the implementation's own: a large one must not make the batch too wide to
    judge): the cap, not their order, decides how many are made (named "at once 1", ...)."""
    session_id = workreq_world.session_id(f'session "{session}"')
    arguments = {
        "kind": DelegationKind(kind),
        "originating_session_id": session_id,
        "deliverable": DEFAULT_DELIVERABLE,
        "acceptance_checks": DEFAULT_CHECKS,
        "budget_slice": int(budget_slice),
        "permissions": workreq_world.session_permissions[session_id],
        "assignee": None,
    }
    since = workreq_world.race_begins()
    cap = workreq_world.limits().max_children_per_session
    asked = cap + min(cap, 4)
    outcomes = workreq_world.driver.run_concurrently(
        [ConcurrentCall(operation="delegate", arguments=arguments)] * asked
    )
    made = [WorkRequest.model_validate(outcome.result) for outcome in outcomes if outcome.ok]
    for index, request in enumerate(made, 1):
        workreq_world.remember_request(f"at once {index}", request)
    workreq_world.racing = Racing(session, since)


_RESULTS = r'(?P<results>"[^"]*"(?:(?:, | and )"[^"]*")*)'


@when(
    parsers.re(
        r'"(?P<holder>[^"]+)" publishes "(?P<name>[^"]+)"(?: at generation (?P<generation>\d+))?'
        r" with results " + _RESULTS + " at once"
    )
)
def publishes_at_once(
    workreq_world: WorkRequestWorld,
    holder: str,
    name: str,
    generation: str | None,
    results: str,
) -> None:
    """The holder's publishes of one request, all in one batch (exact retries among them)."""
    presented = int(generation) if generation else workreq_world.granted(name, holder).generation
    request_id = workreq_world.request_id(name)
    since = workreq_world.race_begins()
    outcomes = workreq_world.driver.run_concurrently(
        [
            ConcurrentCall(
                operation="publish",
                arguments={
                    "request_id": request_id,
                    "holder": holder,
                    "generation": presented,
                    "result_ref": result,
                },
            )
            for result in quoted(results)
        ]
    )
    workreq_world.driver.get_request(request_id)
    workreq_world.racing = Racing(name, since)
    accepted = [outcome for outcome in outcomes if outcome.ok]
    if accepted:
        workreq_world.completions.setdefault(name, Completion.model_validate(accepted[0].result))


@when(
    parsers.re(
        r'"(?P<holder>[^"]+)" claims "(?P<name>[^"]+)", then at once '
        r'(?P<rivals>"[^"]+"(?:(?:, | and )"[^"]+")*) claims? it while "(?P=holder)" heartbeats '
        r'and publishes it with result "(?P<result>[^"]+)"'
    )
)
def claim_then_race(
    workreq_world: WorkRequestWorld, holder: str, name: str, rivals: str, result: str
) -> None:
    """A claim, then in one batch: other principals' claims, the holder's heartbeat and its
    publish under the lease just granted."""
    request_id = workreq_world.request_id(name)
    since = workreq_world.race_begins()
    lease: Lease | None = workreq_world.perform(
        "claim",
        f"{holder!r}'s claim of {name!r}",
        claim_clause(workreq_world, name),
        lambda: workreq_world.driver.claim(request_id, holder),
    )
    if lease is None:
        return
    workreq_world.remember_lease(name, holder, lease)
    fence = {"request_id": request_id, "holder": holder, "generation": lease.generation}
    outcomes = workreq_world.driver.run_concurrently(
        [
            *(
                ConcurrentCall(operation="claim", arguments={"request_id": request_id, "holder": r})
                for r in quoted(rivals)
            ),
            ConcurrentCall(operation="heartbeat", arguments=fence),
            ConcurrentCall(operation="publish", arguments={**fence, "result_ref": result}),
        ]
    )
    workreq_world.driver.get_request(request_id)
    workreq_world.racing = Racing(name, since)
    *_, renewed, published = outcomes
    if renewed.ok:
        workreq_world.remember_renewal(name, holder, Lease.model_validate(renewed.result))
    if published.ok:
        workreq_world.completions.setdefault(name, Completion.model_validate(published.result))


# --------------------------------------------------------------------------
# Time measured in lease durations
# --------------------------------------------------------------------------


@given("the lease duration passes")
@when("the lease duration passes")
def lease_duration_passes(workreq_world: WorkRequestWorld) -> None:
    """Lands on the expiry instant itself: only for scenarios about WR-8's boundary."""
    workreq_world.driver.advance_clock(workreq_world.lease_duration())


@given("the lease runs out")
@when("the lease runs out")
def lease_runs_out(workreq_world: WorkRequestWorld) -> None:
    """Just past the expiry, where the lease has expired under any reading of the boundary."""
    workreq_world.driver.advance_clock(workreq_world.lease_duration() + timedelta(microseconds=1))


@given("half the lease duration passes")
@when("half the lease duration passes")
def half_lease_duration_passes(workreq_world: WorkRequestWorld) -> None:
    workreq_world.driver.advance_clock(workreq_world.lease_duration() / 2)


@when(parsers.re(r"(?P<count>\d+) lease durations pass"))
def lease_durations_pass(workreq_world: WorkRequestWorld, count: str) -> None:
    workreq_world.driver.advance_clock(workreq_world.lease_duration() * int(count))


@given(parsers.re(r"(?P<duration>.+) (?P<relation>less|more) than the lease duration passes"))
@when(parsers.re(r"(?P<duration>.+) (?P<relation>less|more) than the lease duration passes"))
def near_lease_duration_passes(
    workreq_world: WorkRequestWorld, duration: str, relation: str
) -> None:
    offset = parse_duration(duration)
    lease = workreq_world.lease_duration()
    workreq_world.driver.advance_clock(lease + (offset if relation == "more" else -offset))


# --------------------------------------------------------------------------
# A crash in the middle of claims and publishes
# --------------------------------------------------------------------------


def claimed_batch(
    world: WorkRequestWorld, prefix: str, count: int, holder: str, root: str = "root"
) -> list[str]:
    """`count` requests of slice 10 from a root session, each claimed by `holder`."""
    names = []
    for index in range(1, count + 1):
        name = f"{prefix} {index}"
        request = world.build(
            f"the delegation of {name!r}",
            CREATES,
            delegation(world, f'session "{root}"', "spawn", 10),
        )
        world.remember_request(name, request)
        lease = world.build(f"{holder!r}'s claim of {name!r}", FENCED, claim(world, holder, name))
        world.remember_lease(name, holder, lease)
        names.append(name)
    return names


@given(
    parsers.re(
        r'(?P<count>\d+) requests delegated by session "root" with a slice of 10 each, '
        r'each claimed by "(?P<holder>[^"]+)"'
    )
)
def requests_claimed(workreq_world: WorkRequestWorld, count: str, holder: str) -> None:
    workreq_world.batch = claimed_batch(workreq_world, "batch", int(count), holder)


def publish_and_claim_calls(
    world: WorkRequestWorld, names: list[str], holder: str, rival: str
) -> list[ConcurrentCall]:
    calls = []
    for name in names:
        lease = world.granted(name, holder)
        request_id = world.request_id(name)
        publish = {
            "request_id": request_id,
            "holder": holder,
            "generation": lease.generation,
            "result_ref": f"s3://results/{name.replace(' ', '-')}",
        }
        calls += [ConcurrentCall(operation="publish", arguments=publish)] * 2
        claim_args = {"request_id": request_id, "holder": rival}
        calls += [ConcurrentCall(operation="claim", arguments=claim_args)] * 2
    return calls


@when(
    parsers.re(
        r'the implementation crashes while "(?P<holder>[^"]+)" publishes each of them twice '
        r'and "(?P<rival>[^"]+)" claims each of them twice, all at once'
    )
)
def crash_during_publishes(workreq_world: WorkRequestWorld, holder: str, rival: str) -> None:
    """A first batch, on requests of a campaign of the step's own, readies the workers and is
    timed; the crash then lands about halfway into the batch on the scenario's requests."""
    environment = next(iter(workreq_world.environments))
    principal = workreq_world.environments[environment][0]
    setup(
        "the warm-up campaign",
        lambda: workreq_world.driver.create_campaign("warm-up", environment, 100),
    )
    workreq_world.campaigns["warm-up"] = 100
    setup(
        "the warm-up root session",
        lambda: workreq_world.driver.create_session(
            "warm-up root", "warm-up", principal, Permissions()
        ),
    )
    workreq_world.session_permissions["warm-up root"] = Permissions()
    warm = claimed_batch(
        workreq_world, "warm-up", len(workreq_world.batch), holder, root="warm-up root"
    )
    batch_takes = timed_warm_up(
        workreq_world.driver, publish_and_claim_calls(workreq_world, warm, holder, rival)
    )
    calls = publish_and_claim_calls(workreq_world, workreq_world.batch, holder, rival)
    crash_during(workreq_world.driver, calls, batch_takes)
    workreq_world.crashed = True


@when(parsers.re(r'"(?P<holder>[^"]+)" claims every one of them'))
def claims_every_one(workreq_world: WorkRequestWorld, holder: str) -> None:
    """Completed or not: a completed one must refuse her, every other one must be hers."""
    for name in scenario_value(workreq_world.batch or None, "no batch of requests was made"):
        try:
            lease = claim(workreq_world, holder, name)()
        except DriverError as error:
            workreq_world.late_claims[name] = error
            continue
        workreq_world.late_claims[name] = lease
        workreq_world.remember_lease(name, holder, lease)
