"""Race steps: concurrent batches through `run_concurrently`, judged by the history checker.

The race programs live in `conformance.races`; the checker's counts (the largest
over-admission observed, how many operations were checked) go into the
scenario's result record as evidence, whether it passes or fails.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pytest_bdd import given, parsers, then, when

from conformance.checker import over_admission_evidence
from conformance.driver import Capability, Driver
from conformance.history import HistoryRecorder
from conformance.pytest_plugin import require
from conformance.races import (
    PUBLISHED_RESULTS,
    RaceVerdict,
    claim_race,
    delegation_race,
    office_wake_race,
    publish_race,
)

RACE_START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def recorder_for(driver: Driver) -> HistoryRecorder:
    recorder = HistoryRecorder(driver)
    recorder.set_clock(RACE_START)
    return recorder


def record(evidence: list[str], verdict: RaceVerdict) -> RaceVerdict:
    evidence.extend(
        f"{check.check}: {check.operations_checked} operations checked, counts {dict(check.counts)}"
        for check in verdict.checks
    )
    return verdict


def assert_clean(verdict: RaceVerdict) -> None:
    assert verdict.ok, f"the history checker found violations:\n{verdict}"


@given("the implementation evaluates operations concurrently")
def evaluates_concurrently(driver: Driver) -> None:
    require(driver, Capability.CONCURRENCY)


@when(
    parsers.parse(
        "in each of {rounds:d} rounds, {concurrent:d} agent wakes at once meet a task "
        "with one place left in its allowance"
    ),
    target_fixture="race",
)
def agent_wakes_race(
    driver: Driver, evidence: list[str], rounds: int, concurrent: int
) -> RaceVerdict:
    verdict = office_wake_race(recorder_for(driver), rounds=rounds, concurrent=concurrent)
    evidence.append(over_admission_evidence(verdict.check("allowance")))
    return record(evidence, verdict)


@then(
    parsers.parse(
        "no wake was refused before the allowance was reached, and no round admitted "
        "more than {bound:d} beyond it"
    )
)
def allowance_held_under_race(race: RaceVerdict, bound: int) -> None:
    assert_clean(race)
    largest = race.check("allowance").counts.get("largest_over_admission", 0)
    assert largest <= bound, f"over-admission of {largest} beyond the allowance, bound {bound}"


@when(
    parsers.parse(
        "{claimants:d} members claim one open request at once, for {requests:d} requests"
    ),
    target_fixture="race",
)
def claims_race(driver: Driver, evidence: list[str], claimants: int, requests: int) -> RaceVerdict:
    return record(
        evidence, claim_race(recorder_for(driver), requests=requests, claimants=claimants)
    )


@then(
    parsers.parse(
        'each request had exactly one winning claim and {losers:d} refused with "lease_held"'
    )
)
def one_winner_per_request(race: RaceVerdict, losers: int) -> None:
    assert_clean(race)
    claims = race.check("claims")
    requests = claims.counts.get("succeeded", 0)
    assert requests > 0, f"no claim succeeded: {claims}"
    assert claims.counts.get("refused_lease_held", 0) == requests * losers, str(claims)


@when(
    parsers.parse(
        "the holder of each of {requests:d} claimed requests publishes it several times at once"
    ),
    target_fixture="race",
)
def publishes_race(driver: Driver, evidence: list[str], requests: int) -> RaceVerdict:
    evidence.append(f"results published at once per request: {list(PUBLISHED_RESULTS)}")
    return record(evidence, publish_race(recorder_for(driver), requests=requests))


@then(parsers.parse("each request was completed by exactly one publish and its lease closed once"))
def completed_once(race: RaceVerdict) -> None:
    assert_clean(race)
    publishes = race.check("publishes")
    accepted = publishes.counts.get("accepted", 0)
    assert accepted > 0, f"no publish was accepted: {publishes}"
    assert publishes.counts.get("lease_closes", 0) == accepted, str(publishes)


@when(
    parsers.parse(
        "{delegations:d} delegations of {budget_slice:d} are made at once from a campaign "
        "with a budget of {budget:d}"
    ),
    target_fixture="race",
)
def delegations_race(
    driver: Driver, evidence: list[str], delegations: int, budget_slice: int, budget: int
) -> RaceVerdict:
    verdict = delegation_race(
        recorder_for(driver),
        budget=budget,
        delegations=delegations,
        budget_slice=budget_slice,
        sessions=5,
    )
    return record(evidence, verdict)


@then(
    parsers.parse(
        "at most {most:d} delegations succeeded and the budget was conserved and never negative"
    )
)
def budget_held_under_race(race: RaceVerdict, most: int) -> None:
    assert_clean(race)
    succeeded = race.check("budget").counts.get("delegations_succeeded", 0)
    assert 0 < succeeded <= most, f"{succeeded} delegations succeeded, expected 1 to {most}"
