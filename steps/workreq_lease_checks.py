"""Work-request Then steps on states, leases and completions."""

from __future__ import annotations

from pytest_bdd import parsers, then

from conformance.driver import (
    DelegationKind,
    RequestState,
)
from conformance.oracle.stored_instants import as_stored
from conformance.oracle.work_request_cites import (
    EXPIRED_STATE,
    KIND_CREATES,
)
from conformance.spec.clause_check import (
    expect,
    scenario_value,
)
from conformance.steps.common import READING
from conformance.steps.workreq_checks import (
    cite_or_reading,
    request,
)
from conformance.steps.workreq_world import (
    WorkRequestWorld,
)

# --------------------------------------------------------------------------
# States, leases and completions
# --------------------------------------------------------------------------

STATE_CLAUSES = {
    "open": "AC-ARMONIA-WORKREQ-001.1/creates-request",
    "open again": EXPIRED_STATE,
}
"""A new request reads open by the contract; one whose lease expired reads open again only as
WR-20 names its state (the clause says it is claimable again, which a claim shows)."""


def state_kind(state: str) -> str:
    """The kind of answer a state read otherwise than the kit's reading is (see `expect`)."""
    return (
        "in-progress"
        if state.replace(" ", "_") == RequestState.IN_PROGRESS.value
        else "other-state"
    )


@then(parsers.re(r'"(?P<name>[^"]+)" is (?P<state>open again|open)$'))
def request_is_open(workreq_world: WorkRequestWorld, name: str, state: str) -> None:
    observed = request(workreq_world, name).state
    expect(
        observed is RequestState.OPEN,
        STATE_CLAUSES[state],
        f"expected {name!r} to be open, observed {observed.value}",
        observed=state_kind(observed.value),
    )


@then(parsers.re(r'"(?P<name>[^"]+)" was made by (?P<kind>spawn|subagent)'))
def made_by(workreq_world: WorkRequestWorld, name: str, kind: str) -> None:
    observed = request(workreq_world, name).kind
    expected = DelegationKind(kind)
    expect(
        observed is expected,
        KIND_CREATES[expected],
        f"expected {name!r} to be a request made by {kind}, it reads {observed.value}",
    )


def lease_clause(world: WorkRequestWorld) -> str:
    return (
        "AC-ARMONIA-WORKREQ-001.3/lease-survives"
        if world.restarted
        else "AC-ARMONIA-WORKREQ-001.7/fenced"
    )


@then(parsers.re(r'"(?P<holder>[^"]+)" holds "(?P<name>[^"]+)" under (?:his|her) current lease'))
def holds_as_granted(workreq_world: WorkRequestWorld, holder: str, name: str) -> None:
    granted = workreq_world.granted(name, holder)
    current = request(workreq_world, name)
    observed = (current.state, current.lease.holder, current.lease.generation)
    expected = (RequestState.IN_PROGRESS, holder, granted.generation)
    expect(
        observed == expected,
        lease_clause(workreq_world),
        f"expected {name!r} (state, holder, generation) {expected}, observed {observed}",
    )


@then(
    parsers.re(
        r'"(?P<holder>[^"]+)" holds "(?P<name>[^"]+)" under a newer generation than '
        r'(?:"(?P<other>[^"]+)" held|(?P<own>his first claim))'
    )
)
def holds_newer(
    workreq_world: WorkRequestWorld, holder: str, name: str, other: str | None, own: str | None
) -> None:
    """A claim granted after an earlier one's lease: that the request could be claimed again is
    001.4's, that the generation moved on is 001.7's."""
    older = (
        workreq_world.first_grant(name, holder) if own else workreq_world.granted(name, other or "")
    )
    current = request(workreq_world, name)
    held = current.state is RequestState.IN_PROGRESS and current.lease.holder == holder
    expect(
        held,
        "AC-ARMONIA-WORKREQ-001.4/claimable-again",
        f"expected {holder!r} to hold {name!r} after {other or holder!r} held it, observed "
        f"{current.state.value} {current.lease}",
    )
    expect(
        current.lease.generation > older.generation,
        "AC-ARMONIA-WORKREQ-001.7/fenced",
        f"expected {holder!r} to hold {name!r} under a generation above {older.generation}, "
        f"observed {current.lease}",
    )


@then(
    parsers.re(
        READING + r'"(?P<holder>[^"]+)" holds "(?P<name>[^"]+)" at generation (?P<generation>\d+)'
    )
)
def holds_at_generation(
    workreq_world: WorkRequestWorld, reading: str | None, holder: str, name: str, generation: str
) -> None:
    current = request(workreq_world, name)
    observed = (current.lease.holder, current.lease.generation)
    expect(
        observed == (holder, int(generation)),
        cite_or_reading(reading, "AC-ARMONIA-WORKREQ-001.7/fenced"),
        f"expected {name!r} held by {holder!r} at generation {generation}, observed {observed}",
        observed="other-generation",
    )


@then(parsers.re(r'the lease of "(?P<name>[^"]+)" expires when the heartbeat said it would'))
def expiry_as_renewed(workreq_world: WorkRequestWorld, name: str) -> None:
    renewed = scenario_value(workreq_world.renewed.get(name), f"{name!r} was never heartbeaten")
    stored = request(workreq_world, name).lease.expires_at
    expect(
        stored == renewed.expires_at,
        "AC-ARMONIA-WORKREQ-001.3/lease-survives",
        f"the heartbeat renewed the lease to {renewed.expires_at}, it reads {stored}",
    )


@then(parsers.re(READING + r'the lease of "(?P<name>[^"]+)" expires one lease duration from now'))
def expires_one_duration_from_now(
    workreq_world: WorkRequestWorld, reading: str | None, name: str
) -> None:
    expected = workreq_world.now() + workreq_world.lease_duration()
    observed = request(workreq_world, name).lease.expires_at
    expect(
        observed in as_stored(expected),
        cite_or_reading(reading, "AC-ARMONIA-WORKREQ-001.10/contract-fields"),
        f"expected the lease of {name!r} to expire at {expected}, observed {observed}",
        observed="other-figures",
    )


@then(
    parsers.re(
        r'the heartbeat pushed the lease of "(?P<name>[^"]+)" later than the claim had it expire'
    )
)
def heartbeat_pushed_later(workreq_world: WorkRequestWorld, name: str) -> None:
    renewed = scenario_value(workreq_world.renewed.get(name), f"{name!r} was never heartbeaten")
    holder = scenario_value(renewed.holder, "the heartbeat answered a lease without a holder")
    granted = workreq_world.claimed(name, holder)
    stored = request(workreq_world, name).lease.expires_at
    later = (
        renewed.expires_at is not None
        and granted.expires_at is not None
        and renewed.expires_at > granted.expires_at
        and stored == renewed.expires_at
    )
    expect(
        later,
        "AC-ARMONIA-WORKREQ-001.12/heartbeat-extends",
        f"the claim's lease expired at {granted.expires_at}; the heartbeat answered "
        f"{renewed.expires_at} and the request reads {stored}",
    )


@then(parsers.re(READING + r'the heartbeat kept the generation "(?P<holder>[^"]+)" was granted'))
def heartbeat_kept_generation(
    workreq_world: WorkRequestWorld, reading: str | None, holder: str
) -> None:
    renewed = [
        (name, lease) for name, lease in workreq_world.renewed.items() if lease.holder == holder
    ]
    scenario_value(renewed or None, f"{holder!r} never heartbeat")
    for name, lease in renewed:
        granted = workreq_world.claimed(name, holder)
        expect(
            lease.generation == granted.generation,
            cite_or_reading(reading, "AC-ARMONIA-WORKREQ-001.7/fenced"),
            f"the heartbeat moved the generation from {granted.generation} to {lease.generation}",
            observed="other-generation",
        )


@then(
    parsers.re(
        r'"(?P<name>[^"]+)" is completed with result "(?P<result>[^"]+)" by "(?P<holder>[^"]+)"'
        r" under (?:his|her) current lease"
    )
)
def completed_with_result(
    workreq_world: WorkRequestWorld, name: str, result: str, holder: str
) -> None:
    generation = workreq_world.granted(name, holder).generation
    current = request(workreq_world, name)
    observed = (current.state, current.result_ref, current.lease.holder, current.lease.generation)
    expected = (RequestState.COMPLETED, result, holder, generation)
    expect(
        observed == expected,
        "AC-ARMONIA-WORKREQ-001.6/records-result",
        f"expected {name!r} (state, result, holder, generation) {expected}, observed {observed}",
    )
    completion = scenario_value(
        workreq_world.completions.get(name), f"no publish of {name!r} was accepted"
    )
    acknowledged = (completion.holder, completion.generation, completion.result_ref)
    expect(
        acknowledged == (holder, generation, result),
        "AC-ARMONIA-WORKREQ-001.6/records-result",
        f"the publish was acknowledged as {acknowledged}, not ({holder!r}, {generation}, "
        f"{result!r})",
    )
    expect(
        current.lease.closed_at is not None,
        "AC-ARMONIA-WORKREQ-001.6/closes-once",
        f"the completed request's lease is closed, observed {current.lease}",
    )


@then(
    parsers.re(
        READING + r'the retry answers with the completion of "(?P<name>[^"]+)" recorded the first'
        " time"
    )
)
def retry_answers_recorded_completion(
    workreq_world: WorkRequestWorld, reading: str | None, name: str
) -> None:
    recorded = scenario_value(workreq_world.completions.get(name), "no first publish recorded")
    retry = scenario_value(workreq_world.retry, "no retry was accepted")
    expect(
        retry == recorded,
        cite_or_reading(reading, "AC-ARMONIA-WORKREQ-001.6/closes-once"),
        f"expected the retry to answer {recorded!r}, observed {retry!r}",
        observed="other-figures",
    )


EXPIRY_INSTANT_CLAUSES = {
    # (the attempt, the heartbeat showed the lease expired): the clause its answer keeps
    ("publish", True): "AC-ARMONIA-WORKREQ-001.4/expired-cannot-publish",
    ("publish", False): "AC-ARMONIA-WORKREQ-001.6/records-result",
    ("claim", True): "AC-ARMONIA-WORKREQ-001.4/claimable-again",
    ("claim", False): "AC-ARMONIA-WORKREQ-001.7/fenced",
}
"""Whether a lease is live at its expiry instant is WR-8's to read; once the holder's heartbeat
at that instant has shown how the implementation reads it, every reading asks the same of the
next attempt there: an expired lease takes no publish and lets anyone entitled claim, a lease
the heartbeat renewed takes its holder's publish and fences a rival's claim."""


@then("that attempt read the lease at that instant as the heartbeat did")
def read_as_the_heartbeat_did(workreq_world: WorkRequestWorld) -> None:
    attempt = scenario_value(workreq_world.last, "no attempt was made")
    heartbeat = scenario_value(workreq_world.heartbeat, "no heartbeat was tried")
    expired = heartbeat.error is not None
    clause = scenario_value(
        EXPIRY_INSTANT_CLAUSES.get((attempt.operation, expired)),
        f"a {attempt.operation} is not judged against a heartbeat",
    )
    accepted = attempt.error is None
    shown = f"refused ({heartbeat.error})" if expired else "accepted"
    expect(
        accepted == (expired == (attempt.operation == "claim")),
        clause,
        f"{heartbeat.what} was {shown} at that instant; then {attempt.what} was "
        + ("accepted" if accepted else f"refused ({attempt.error})"),
    )
