"""Work-request When steps that make calls at once, measure time in lease durations, or crash
the implementation in the middle of a batch; the Then steps judge them by the search."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from pytest_bdd import given, parsers, when

from conformance.driver import (
    Completion,
    ConcurrentCall,
    DelegationKind,
    DriverError,
    Lease,
    Permissions,
    WorkRequest,
)
from conformance.spec.clause_check import (
    expect,
    scenario_requires,
    scenario_value,
)
from conformance.steps.common import parse_duration, quoted
from conformance.steps.concurrency import crash_during, timed_warm_up
from conformance.steps.workreq_actions import (
    DEFAULT_CHECKS,
    DEFAULT_DELIVERABLE,
    ORIGIN,
    USAGE,
    claim,
    claim_clause,
    creation_clauses,
    delegation,
    parse_grants,
    setup,
)
from conformance.steps.workreq_world import (
    Racing,
    WorkRequestWorld,
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
        USAGE + r" records (?:(?P<count>\d+) usages of (?P<amount>\d+)"
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
        USAGE + r" records usages of (?P<amounts>\d+(?:(?:, | and )\d+)*) at once while "
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
        USAGE + r" records usages of (?P<amounts>\d+(?:(?:, | and )\d+)*) at once while "
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
        ORIGIN + r' delegates (?P<names>"[^"]+"(?:(?:, | and )"[^"]+")*) at once, each by '
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
            "AC-ARMONIA-WORKREQ-001.1/creates-request",
            delegation(world, f'session "{root}"', "spawn", 10),
        )
        world.remember_request(name, request)
        lease = world.build(
            f"{holder!r}'s claim of {name!r}",
            "AC-ARMONIA-WORKREQ-001.7/fenced",
            claim(world, holder, name),
        )
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
