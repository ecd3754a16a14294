"""Work-request Then steps (REQ-ARMONIA-WORKREQ-001): every check names the clause it enforces.

A step prefixed "as WR-n reads it," checks a value that only the registered
interpretation fixes: it cites the interpretation alone, so an implementation
that reads the open question otherwise is `diverged`, not failed. Those
scenarios check the clause-level invariant (conservation, a refusal, a newer
generation) first, without the prefix.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

from pytest_bdd import parsers, then

from conformance.concurrency.history import Operation
from conformance.concurrency.races import RaceVerdict, work_request_checks
from conformance.driver import (
    BudgetSnapshot,
    DelegationKind,
    DriverError,
    ErrorCode,
    Lease,
    RequestState,
    WorkRequest,
)
from conformance.oracle.grants import folded_within, within
from conformance.oracle.stored_instants import as_stored
from conformance.oracle.work_request_cites import (
    CLAIMABLE_AGAIN,
    CLOSES_ONCE,
    CONTRACT,
    COUNT_CAP,
    CREATES,
    EXPIRED_STATE,
    FENCED,
    GRANT_NAMES_EXACT,
    KIND_CREATES,
    LEASE_SURVIVES,
    MEMBERS_LIST,
    NO_AUTHORITY,
    NO_WIDER_GRANT,
    NON_MEMBERS,
    RECORDS_RESULT,
    REQUEST_SURVIVES,
    SLICE_DEDUCTED,
    STALE_REJECTED,
    USAGE_DRAWS,
    WITHIN_SLICE,
)
from conformance.oracle.work_request_cites import (
    NO_BUDGET as NO_BUDGET_CREATED,
)
from conformance.spec.clause_check import (
    Cite,
    cites_of,
    expect,
    port_requires,
    scenario_requires,
    scenario_value,
    violated,
)
from conformance.spec.registry import INTERPRETATION_ID
from conformance.steps.common import READING, quoted, readings_named
from conformance.steps.concurrency import decided
from conformance.steps.workreq_actions import parse_grants
from conformance.steps.workreq_world import (
    UNKNOWN_ENVIRONMENT,
    WRITES_NOTHING,
    Observation,
    WorkRequestWorld,
    refusal_cites,
)


def cite_or_reading(reading: str | None, cite: Cite) -> Cite:
    """The clauses the check enforces; under a prefixed step, the interpretation it rests on
    instead, together with any interpretation the check itself names."""
    if reading is None:
        return cite
    named = [*readings_named(reading), *filter(INTERPRETATION_ID.fullmatch, cites_of(cite))]
    return tuple(dict.fromkeys(named))


def request(world: WorkRequestWorld, name: str) -> WorkRequest:
    return world.driver.get_request(world.request_id(name))


# --------------------------------------------------------------------------
# Refusals
# --------------------------------------------------------------------------


def check_nothing_changed(world: WorkRequestWorld, cites: tuple[str, ...]) -> None:
    """A refusal leaves everything as it was, whatever reading the refusal itself rested on.

    A refused delegation did not happen, so it made no request and no child session (the
    refusal's own clauses); that it moved no budget and used no cap slot either is WR-4's.
    """
    attempt = scenario_value(world.last, "no attempt was made")
    after = world.observe()
    expect(
        after.footprint() == attempt.before.footprint(),
        cites,
        lambda: "a refused operation made something: " + attempt.before.differences(after),
        observed="made",
    )
    expect(
        after == attempt.before,
        (WRITES_NOTHING,) if attempt.operation == "delegate" else cites,
        lambda: (
            "a refused operation writes nothing; it changed:\n" + attempt.before.differences(after)
        ),
        observed="changed",
    )


def check_refused(
    world: WorkRequestWorld, codes: list[ErrorCode], reading: str | None
) -> tuple[DriverError, tuple[str, ...]]:
    attempt = scenario_value(world.last, "no attempt was made")
    cites = refusal_cites(attempt.operation, codes)
    error = attempt.error
    if error is None:
        raise violated(
            cite_or_reading(reading, cites),
            f"expected {attempt.what} to be refused with {' or '.join(c.value for c in codes)}, "
            "observed it accepted",
            observed="accepted",
        )
    port_requires(error.definite, f"a refusal is definite; observed an indeterminate one: {error}")
    expect(
        error.code in codes,
        cite_or_reading(reading, cites),
        f"expected {attempt.what} refused with {' or '.join(c.value for c in codes)}, "
        f"observed {error.code.value!r} ({error.message})",
        observed=f"refused:{error.code.value}",
    )
    return error, cites


def refused_as(world: WorkRequestWorld, code: ErrorCode) -> bool:
    """Whether the last attempt was refused; if it was, it must have been with `code`, and
    have changed nothing."""
    attempt = scenario_value(world.last, "no attempt was made")
    if attempt.error is None:
        return False
    _, cites = check_refused(world, [code], None)
    check_nothing_changed(world, cites)
    return True


@then(
    parsers.re(
        READING + r'the attempt is refused with (?P<codes>"[a-z_]+"(?: or "[a-z_]+")*)'
        r" and nothing changes"
    )
)
def refused_and_nothing_changes(
    workreq_world: WorkRequestWorld, reading: str | None, codes: str
) -> None:
    expected = [ErrorCode(code) for code in quoted(codes)]
    _, cites = check_refused(workreq_world, expected, reading)
    check_nothing_changed(workreq_world, cites)


NO_NEGATIVE = "AC-ARMONIA-WORKREQ-001.9/no-negative-amount"


@then("the attempt is refused, as no amount may run budget backwards, and nothing changes")
def refused_below_zero(workreq_world: WorkRequestWorld) -> None:
    """Every reading of bad input refuses an amount below zero: taking it would hand back
    budget nobody returned. Which code it gets is the implementation's; that it made nothing
    and moved no budget is this clause's, while whether a refused delegation keeps a cap slot
    is WR-4's, as for every refusal."""
    attempt = scenario_value(workreq_world.last, "no attempt was made")
    expect(
        attempt.error is not None,
        NO_NEGATIVE,
        f"expected {attempt.what} to be refused under every reading; observed it accepted",
    )
    after = workreq_world.observe()
    expect(
        after.budgets == attempt.before.budgets,
        NO_NEGATIVE,
        lambda: "a refused amount below zero moved budget:\n" + attempt.before.differences(after),
    )
    check_nothing_changed(workreq_world, (NO_NEGATIVE,))


@then(
    parsers.re(
        r'the attempt was refused with "insufficient_budget" and nothing changed, or the slice of '
        r'"(?P<name>[^"]+)" came out of "(?P<campaign>[^"]+)"'
    )
)
def refused_or_paid_by_campaign(workreq_world: WorkRequestWorld, name: str, campaign: str) -> None:
    """A slice comes out of a source that holds it, whichever source a reading takes it from:
    the child's remainder (refused here, for the scenario leaves it short) or the campaign
    (WR-1's alternative, which then pays for it). Accepted and paid by neither, the lineage
    holds budget nobody gave it."""
    attempt = scenario_value(workreq_world.last, "no delegation was tried")
    if refused_as(workreq_world, ErrorCode.INSUFFICIENT_BUDGET):
        return
    made = request(workreq_world, name)
    before = attempt.before.budgets[campaign].available
    after = workreq_world.driver.budget(campaign).available
    expect(
        before - after == made.budget_slice,
        NO_BUDGET_CREATED,
        f"a slice of {made.budget_slice} its originator had not left was accepted, and "
        f"{campaign!r} paid {before - after} of it: the lineage now holds budget nobody gave it",
    )


@then("the listing is refused and nothing changes")
def listing_refused(workreq_world: WorkRequestWorld) -> None:
    attempt = scenario_value(workreq_world.last, "no attempt was made")
    cites = (NON_MEMBERS,)
    expect(
        attempt.error is not None,
        cites,
        f"a non-member's listing is refused; observed {attempt.what} accepted",
    )
    check_nothing_changed(workreq_world, cites)


@then(
    parsers.re(
        READING + r"the refusal reads exactly like listing an environment that does not exist"
    )
)
def refusal_reads_like_unknown_environment(
    workreq_world: WorkRequestWorld, reading: str | None
) -> None:
    """Compare code and message; the caller's own environment id may differ, nothing else."""
    environment, principal = scenario_value(workreq_world.last_listing, "no listing was tried")
    refused = scenario_value(
        workreq_world.last.error if workreq_world.last else None, "no refused listing to compare"
    )
    try:
        workreq_world.driver.list_requests(UNKNOWN_ENVIRONMENT, principal)
    except DriverError as unknown:
        observed = (
            refused.code,
            re.sub(rf"\b{re.escape(environment)}\b", "<environment>", refused.message),
        )
        expected = (unknown.code, unknown.message.replace(UNKNOWN_ENVIRONMENT, "<environment>"))
        expect(
            observed == expected,
            cite_or_reading(reading, NON_MEMBERS),
            f"the non-member's refusal {observed} does not read like an unknown environment's "
            f"{expected}",
            observed="other-refusal",
        )
        return
    raise violated(
        cite_or_reading(reading, NON_MEMBERS),
        "listing an environment that does not exist was answered with a list",
        observed="accepted",
    )


@then(
    "the child was granted nothing its originator lacks: the attempt was refused with "
    '"permission_escalation" and nothing changed, or the request narrowed the grant'
)
def refused_or_narrowed(workreq_world: WorkRequestWorld) -> None:
    attempt = scenario_value(workreq_world.last, "no delegation was tried")
    cites = (NO_WIDER_GRANT, NO_AUTHORITY)
    if attempt.error is not None:
        check_refused(workreq_world, [ErrorCode.PERMISSION_ESCALATION], None)
        check_nothing_changed(workreq_world, cites)
        return
    origin = scenario_value(workreq_world.attempted_from, "no delegation was tried")
    held = scenario_value(
        workreq_world.session_permissions.get(origin), f"the scenario never made {origin!r}"
    )
    made = [r for r in workreq_world.requests.values() if r.originating_session_id == origin]
    granted = workreq_world.driver.get_request(made[-1].request_id).permissions
    folded_only = folded_within(granted, held) and not within(granted, held)
    expect(
        within(granted, held),
        (GRANT_NAMES_EXACT,) if folded_only else cites,
        f"the request was accepted granting {granted}, beyond its originator's {held}"
        + (" but for names differing only in case or trailing spaces" if folded_only else ""),
        observed="accepted",
    )


@then(
    parsers.re(
        r'the re-claim was refused with "lease_held" and nothing changed, or "(?P<holder>[^"]+)" '
        r'still holds "(?P<name>[^"]+)"'
    )
)
def reclaim_refused_or_kept(workreq_world: WorkRequestWorld, holder: str, name: str) -> None:
    if refused_as(workreq_world, ErrorCode.LEASE_HELD):
        return
    current = request(workreq_world, name)
    expect(
        current.state is RequestState.IN_PROGRESS and current.lease.holder == holder,
        FENCED,
        f"a live holder's accepted re-claim leaves it holding the lease, observed {current.lease}",
    )


# --------------------------------------------------------------------------
# Budgets
# --------------------------------------------------------------------------


@then(
    parsers.re(
        READING + r'the budget of "(?P<campaign>[^"]+)" is (?P<total>\d+) in total,'
        r" (?P<available>\d+) available, (?P<reserved>\d+) reserved and (?P<spent>\d+) spent"
    )
)
def budget_is(
    workreq_world: WorkRequestWorld,
    reading: str | None,
    campaign: str,
    total: str,
    available: str,
    reserved: str,
    spent: str,
) -> None:
    snapshot = check_no_budget_created(workreq_world, campaign)
    observed = (snapshot.total, snapshot.available, snapshot.reserved, snapshot.spent)
    expected = (int(total), int(available), int(reserved), int(spent))
    expect(
        observed == expected,
        cite_or_reading(reading, (SLICE_DEDUCTED, USAGE_DRAWS)),
        f"expected budget (total, available, reserved, spent) {expected}, observed {observed}",
        observed="other-figures",
    )


@then(parsers.re(READING + r'the budget of "(?P<campaign>[^"]+)" is conserved'))
def budget_is_conserved(
    workreq_world: WorkRequestWorld, reading: str | None, campaign: str
) -> None:
    """Nothing created (the clause); nothing lost either, which is WR-3's reading: what a
    completion does not spend goes back, so the parts add up to the total (and where it goes
    back past a completed originator, WR-15's)."""
    snapshot = check_no_budget_created(workreq_world, campaign)
    parts = (snapshot.available, snapshot.reserved, snapshot.spent)
    expect(
        sum(parts) == snapshot.total,
        cite_or_reading(reading, "WR-3"),
        f"expected available + reserved + spent == {snapshot.total}, observed {parts}",
        observed="other-figures",
    )


def check_no_budget_created(world: WorkRequestWorld, campaign: str) -> BudgetSnapshot:
    """The campaign's total stands, no part is negative and together they never exceed it:
    all the text asks (it forbids creating budget, not losing it)."""
    snapshot = world.driver.budget(campaign)
    parts = (snapshot.available, snapshot.reserved, snapshot.spent)
    expect(
        snapshot.total == world.campaigns[campaign] and sum(parts) <= snapshot.total,
        NO_BUDGET_CREATED,
        f"expected a total of {world.campaigns[campaign]} with available + reserved + spent "
        f"no more than it, none negative; observed total {snapshot.total}, (available, "
        f"reserved, spent) {parts}",
    )
    expect(min(parts) >= 0, NO_BUDGET_CREATED, f"a budget part is negative: {parts}")
    return snapshot


@then(
    parsers.re(
        r'the budget of "(?P<campaign>[^"]+)" reads as if each completed request had returned '
        r"its slice once"
    )
)
def budget_returned_once(workreq_world: WorkRequestWorld, campaign: str) -> None:
    """Nothing created (available never above what a single return of each completed slice
    leaves) and nothing lost (never below what the slices took); no usage was recorded."""
    requests = [
        workreq_world.driver.get_request(r.request_id)
        for r in workreq_world.requests.values()
        if r.campaign_id == campaign
    ]
    taken = sum(r.budget_slice for r in requests)
    returned_once = sum(r.budget_slice for r in requests if r.state is RequestState.COMPLETED)
    total = workreq_world.campaigns[campaign]
    available = workreq_world.driver.budget(campaign).available
    expect(
        total - taken <= available <= total - taken + returned_once,
        (CLOSES_ONCE, NO_BUDGET_CREATED),
        f"{available} available; the slices took {taken} of {total}, and the completed "
        f"requests could have given back {returned_once} once",
    )


@then(parsers.re(READING + r'the completion of "(?P<name>[^"]+)" returned (?P<amount>\d+)'))
def completion_returned(
    workreq_world: WorkRequestWorld, reading: str | None, name: str, amount: str
) -> None:
    completion = scenario_value(
        workreq_world.completions.get(name), f"no publish of {name!r} was accepted"
    )
    expect(
        completion.budget_returned == int(amount),
        cite_or_reading(reading, CLOSES_ONCE),
        f"expected the completion of {name!r} to return {amount}, "
        f"observed {completion.budget_returned}",
        observed="other-figures",
    )


@then(
    parsers.re(r'"(?P<name>[^"]+)" has spent (?P<spent>\d+) of its slice of (?P<budget_slice>\d+)')
)
def spent_of_slice(
    workreq_world: WorkRequestWorld, name: str, spent: str, budget_slice: str
) -> None:
    current = request(workreq_world, name)
    observed = (current.budget_spent, current.budget_slice)
    expect(
        observed == (int(spent), int(budget_slice)),
        (USAGE_DRAWS, WITHIN_SLICE),
        f"expected {name!r} (spent, slice) {(int(spent), int(budget_slice))}, observed {observed}",
    )


@then(parsers.re(r'"(?P<name>[^"]+)" has spent no more than its slice'))
def spent_within_slice(workreq_world: WorkRequestWorld, name: str) -> None:
    """Whatever an implementation does with too much usage (refuse it, WR-2, or cap it), the
    slice is a ceiling."""
    current = request(workreq_world, name)
    expect(
        current.budget_spent <= current.budget_slice,
        WITHIN_SLICE,
        f"{name!r} has spent {current.budget_spent} of a slice of {current.budget_slice}",
    )


# --------------------------------------------------------------------------
# Batches made at once, judged by the linearizability search
# --------------------------------------------------------------------------

USAGE_LEDGER = (USAGE_DRAWS, WITHIN_SLICE)
"""The usage ledger: what accepted usages asked drawn from the slice, and never beyond it."""


def race_verdict(world: WorkRequestWorld, evidence: list[str]) -> RaceVerdict:
    """The scenario's whole history, from the world's creation, judged by the search over the
    pure model (`conformance.concurrency.races.work_request_checks`): some order of its calls,
    consistent with when each began and ended, explains every answer and every read. The last
    batch must have left enough definite outcomes to judge anything. Searched once a race: the
    steps after the first read its verdict."""
    racing = scenario_value(world.racing, "no batch was made at once in this scenario")
    scenario_requires(
        not world.recorded.partial,
        "the store changed where no history shows it (a crash): the search cannot judge it",
    )
    if racing.verdict is None:
        racing.verdict = work_request_checks(world.recorded.recorder)
        evidence.extend(racing.verdict.evidence())
    decided(racing.verdict)
    racing.verdict.expect_definite()
    return racing.verdict


def race_about(world: WorkRequestWorld, name: str) -> list[Operation]:
    """The last race's calls, which the scenario says were about `name`."""
    racing = scenario_value(world.racing, "no batch was made at once in this scenario")
    scenario_requires(racing.name == name, f"the last batch was about {racing.name!r}")
    return world.race_calls()


@then(
    parsers.re(
        r'the usages made at once charged "(?P<name>[^"]+)" what the accepted ones asked, and '
        r"never more than its slice"
    )
)
def usages_charged_what_was_accepted(
    workreq_world: WorkRequestWorld, name: str, evidence: list[str]
) -> None:
    """Whatever a race did, some order of its calls explains what the reads after it show:
    the slice moved by what the accepted usages asked (refused beyond what was left, or
    charged up to it, as WR-2's readings say), and a usage whose answer is unknown may or may
    not count."""
    race_about(workreq_world, name)
    race_verdict(workreq_world, evidence).expect_explained(USAGE_LEDGER)


@then(
    parsers.re(
        READING + r'"(?P<name>[^"]+)" was charged exactly what the accepted usages made at once '
        r"asked"
    )
)
def usages_charged_in_full(
    workreq_world: WorkRequestWorld, reading: str | None, name: str, evidence: list[str]
) -> None:
    """The same search, credited to WR-2's reading: the model it explains the race by charges
    each accepted usage in full (the kit's reading, or the one declared)."""
    race_about(workreq_world, name)
    verdict = race_verdict(workreq_world, evidence)
    verdict.expect_explained(cite_or_reading(reading, "WR-2"))


@then(
    parsers.re(
        r'what "(?P<name>[^"]+)" spent and what its completion gave back never add up to more '
        r"than was left of its slice"
    )
)
def spent_or_returned_never_both(
    workreq_world: WorkRequestWorld, name: str, evidence: list[str]
) -> None:
    """Under every reading a usage is charged before the completion closes the slice or
    refused after it: charged and given back both, it is budget nobody had."""
    operations = race_about(workreq_world, name)
    race_verdict(workreq_world, evidence).expect_explained((NO_BUDGET_CREATED, RECORDS_RESULT))
    racing = scenario_value(workreq_world.racing, "no batch was made at once in this scenario")
    request_id = workreq_world.request_id(name)
    room = scenario_value(racing.rooms.get(request_id), f"what {name!r} had left is unknown")
    publishes = [op for op in operations if op.operation == "publish"]
    expect(
        all(op.outcome != "fail" for op in publishes),
        RECORDS_RESULT,
        f"the live holder's publish of {name!r} was refused: {[op.error for op in publishes]}",
    )
    reads = [op for op in operations if op.operation == "get_request" and op.outcome == "ok"]
    before, after = (WorkRequest.model_validate(reads[i].value) for i in (0, -1))
    completion = workreq_world.completions.get(name)
    returned = completion.budget_returned if completion is not None else 0
    charged = after.budget_spent - before.budget_spent
    expect(
        charged + returned <= room,
        NO_BUDGET_CREATED,
        f"{charged} was charged to {name!r} and {returned} given back, of the {room} left: "
        "a usage was both spent and returned",
    )


@then("every usage and delegation made at once was accepted")
def every_call_at_once_accepted(workreq_world: WorkRequestWorld) -> None:
    """The scenario asks only what fits together, whichever order the calls take effect in,
    so every one of them must be accepted."""
    made = [op for op in workreq_world.race_calls() if op.batch is not None]
    refused = [f"{op.operation}: {op.error}" for op in made if op.outcome != "ok"]
    expect(
        not refused,
        (USAGE_DRAWS, CREATES),
        f"calls that fit together were made at once; not accepted: {refused}",
    )


def spent_and_carved(world: WorkRequestWorld, name: str) -> tuple[WorkRequest, int]:
    """The request as it reads now, and the slices of every request its child delegated."""
    current = request(world, name)
    carved = sum(
        made.budget_slice
        for made in world.requests.values()
        if made.originating_session_id == current.child_session_id
    )
    return current, carved


@then(
    parsers.re(
        r'what "(?P<name>[^"]+)" spent and carved out for its own requests is (?P<total>\d+), '
        r"within its slice"
    )
)
def spent_and_carved_exactly(workreq_world: WorkRequestWorld, name: str, total: str) -> None:
    """Each usage charged once and each slice carved once, though made at once: a usage or a
    reservation read and written back while the other landed loses one of them."""
    current, carved = spent_and_carved(workreq_world, name)
    expect(
        current.budget_spent + carved == int(total) <= current.budget_slice,
        (USAGE_DRAWS, NO_BUDGET_CREATED),
        f"{name!r} spent {current.budget_spent} and carved {carved} for its own requests, of a "
        f"slice of {current.budget_slice}; expected {total} in all",
    )


@then(
    parsers.re(
        READING + r'what "(?P<name>[^"]+)" spent and carved out for its own requests is at most '
        r"its slice"
    )
)
def spent_and_carved_within(
    workreq_world: WorkRequestWorld, reading: str | None, name: str
) -> None:
    """A lineage's bound, where its nested slices come out of its own (WR-1): what a request
    spent and what it carved for its children never exceed its slice."""
    current, carved = spent_and_carved(workreq_world, name)
    expect(
        current.budget_spent + carved <= current.budget_slice,
        cite_or_reading(reading, WITHIN_SLICE),
        f"{name!r} spent {current.budget_spent} and carved {carved} for its own requests, "
        f"beyond its slice of {current.budget_slice}",
        observed="other-figures",
    )


@then(
    parsers.re(
        r"some order of the calls made at once explains every answer and what "
        r'"(?P<name>[^"]+)" and its campaign read after them'
    )
)
def calls_at_once_explained(
    workreq_world: WorkRequestWorld, name: str, evidence: list[str]
) -> None:
    """The search alone: usages charged and slices carved each once, within what their source
    held when each took effect, whichever reading of WR-1 the implementation follows. A history
    no reading explains breaks the clauses of the call the search stopped at, or, where only a
    reading names that call's refusal, the ledger's: usage within the slice, charged once, and
    no budget created."""
    race_about(workreq_world, name)
    race_verdict(workreq_world, evidence).expect_explained(
        (WITHIN_SLICE, USAGE_DRAWS, NO_BUDGET_CREATED)
    )


@then(parsers.re(READING + r"at most (?P<most>\d+) of the usages made at once were accepted"))
def at_most_accepted(
    workreq_world: WorkRequestWorld, reading: str | None, most: str, evidence: list[str]
) -> None:
    race_verdict(workreq_world, evidence)
    accepted = sum(
        1
        for op in workreq_world.race_calls()
        if op.batch is not None and op.operation == "record_usage" and op.outcome == "ok"
    )
    evidence.append(f"usages accepted at once: {accepted} (at most {most} fit the slice)")
    expect(
        accepted <= int(most),
        cite_or_reading(reading, "WR-2"),
        f"{accepted} of the usages made at once were accepted; what was left of the slice "
        f"holds at most {most} of them",
        observed="accepted",
    )


@then(
    parsers.re(
        r"at most as many delegations as the count cap allows were made at once from session "
        r'"(?P<name>[^"]+)"'
    )
)
def count_cap_held_at_once(workreq_world: WorkRequestWorld, name: str, evidence: list[str]) -> None:
    """Some order of the batch explains every answer (each refusal the cap's, once it was
    reached), and the cap is the ceiling: a count read before the insert lets them all in."""
    made = [
        op
        for op in race_about(workreq_world, name)
        if op.batch is not None and op.operation == "delegate" and op.outcome == "ok"
    ]
    race_verdict(workreq_world, evidence).expect_explained(COUNT_CAP)
    cap = workreq_world.limits().max_children_per_session
    evidence.append(f"delegations made at once: {len(made)} (the count cap is {cap})")
    expect(
        len(made) <= cap,
        COUNT_CAP,
        f"{len(made)} delegations made at once from {name!r} were accepted; the cap is {cap}",
    )


@then(
    parsers.re(
        r'the publishes made at once completed "(?P<name>[^"]+)" at most once, and every one '
        r"accepted answered that completion"
    )
)
def publishes_completed_once(
    workreq_world: WorkRequestWorld, name: str, evidence: list[str]
) -> None:
    race_about(workreq_world, name)
    race_verdict(workreq_world, evidence).expect_explained((RECORDS_RESULT, CLOSES_ONCE))


@then(
    parsers.re(
        r'the claims, heartbeat and publish made at once on "(?P<name>[^"]+)" granted no second '
        r"lease and completed it at most once"
    )
)
def lease_race_kept_one_lease(
    workreq_world: WorkRequestWorld, name: str, evidence: list[str]
) -> None:
    """No rival got the live lease (every refusal one a lease or a completion explains), and
    the holder's publish completed the request once."""
    race_about(workreq_world, name)
    verdict = race_verdict(workreq_world, evidence)
    verdict.expect_explained((FENCED, STALE_REJECTED, RECORDS_RESULT, CLOSES_ONCE))


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
    return LEASE_SURVIVES if world.restarted else FENCED


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
        CLAIMABLE_AGAIN,
        f"expected {holder!r} to hold {name!r} after {other or holder!r} held it, observed "
        f"{current.state.value} {current.lease}",
    )
    expect(
        current.lease.generation > older.generation,
        FENCED,
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
        cite_or_reading(reading, FENCED),
        f"expected {name!r} held by {holder!r} at generation {generation}, observed {observed}",
        observed="other-generation",
    )


@then(parsers.re(r'the lease of "(?P<name>[^"]+)" expires when the heartbeat said it would'))
def expiry_as_renewed(workreq_world: WorkRequestWorld, name: str) -> None:
    renewed = scenario_value(workreq_world.renewed.get(name), f"{name!r} was never heartbeaten")
    stored = request(workreq_world, name).lease.expires_at
    expect(
        stored == renewed.expires_at,
        LEASE_SURVIVES,
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
        cite_or_reading(reading, CONTRACT),
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
            cite_or_reading(reading, FENCED),
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
        RECORDS_RESULT,
        f"expected {name!r} (state, result, holder, generation) {expected}, observed {observed}",
    )
    completion = scenario_value(
        workreq_world.completions.get(name), f"no publish of {name!r} was accepted"
    )
    acknowledged = (completion.holder, completion.generation, completion.result_ref)
    expect(
        acknowledged == (holder, generation, result),
        RECORDS_RESULT,
        f"the publish was acknowledged as {acknowledged}, not ({holder!r}, {generation}, "
        f"{result!r})",
    )
    expect(
        current.lease.closed_at is not None,
        CLOSES_ONCE,
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
        cite_or_reading(reading, CLOSES_ONCE),
        f"expected the retry to answer {recorded!r}, observed {retry!r}",
        observed="other-figures",
    )


# --------------------------------------------------------------------------
# Permissions, contract fields, identity
# --------------------------------------------------------------------------


@then(parsers.re(r'"(?P<name>[^"]+)" grants (?P<grants>.+)'))
def request_grants(workreq_world: WorkRequestWorld, name: str, grants: str) -> None:
    observed = request(workreq_world, name).permissions
    expected = parse_grants(grants)
    expect(
        observed == expected,
        (CONTRACT, NO_WIDER_GRANT),
        f"expected {name!r} to carry the permission set it was delegated with, {expected}, "
        f"observed {observed}",
    )


@then(
    parsers.re(
        r'no request of "(?P<environment>[^"]+)" grants anything its originating session lacks'
    )
)
def no_request_widens(workreq_world: WorkRequestWorld, environment: str) -> None:
    for name, made in workreq_world.requests.items():
        if made.environment_id != environment:
            continue
        granted = request(workreq_world, name).permissions
        held = workreq_world.session_permissions.get(made.originating_session_id)
        expect(
            held is not None and within(granted, held),
            NO_AUTHORITY,
            f"{name!r} grants {granted}, its originating session holds {held}",
        )


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
    "campaign": lambda r: r.campaign_id,
    "originating session": lambda r: r.originating_session_id,
    "deliverable": lambda r: r.deliverable,
    "acceptance checks": lambda r: r.acceptance_checks,
    "budget slice": lambda r: r.budget_slice,
    "tool grants": lambda r: r.permissions.tools,
    "device grants": lambda r: r.permissions.devices,
    "assignee": lambda r: r.assignee,
    "lease holder": lambda r: r.lease.holder,
    "lease generation": lambda r: r.lease.generation,
    "lease expiry": lambda r: r.lease.expires_at,
    "state": lambda r: r.state,
    "result reference": lambda r: r.result_ref,
}
"""The data contract's fields, and where a WorkRequest carries each."""


def field_matches(
    world: WorkRequestWorld, current: WorkRequest, expected: str, value: object
) -> bool:
    """`<set>` present and non-empty, `<none>` absent, `<any>` anything, `<as granted>` the
    generation the holder's claim was granted; a list (the acceptance checks) in any order, as
    the machine compares it, since the contract gives them none; otherwise the rendered value."""
    if expected == "<any>":
        return True
    if expected == "<set>":
        return value is not None and render(value) != ""
    if expected == "<as granted>":
        holder = current.lease.holder
        name = world.name_of(current.request_id)
        return holder is not None and value == world.granted(name, holder).generation
    if isinstance(value, list):
        return sorted(map(str, value)) == sorted(part.strip() for part in expected.split(";"))
    return render(value) == expected


@then(parsers.re(r'"(?P<name>[^"]+)" reports every contract field as:'))
def reports_contract_fields(
    workreq_world: WorkRequestWorld, name: str, datatable: list[list[str]]
) -> None:
    current = request(workreq_world, name)
    expected = {field_name.strip(): value.strip() for field_name, value in datatable[1:]}
    scenario_requires(
        set(expected) == set(CONTRACT_FIELDS),
        f"the table must name every contract field: {sorted(CONTRACT_FIELDS)}",
    )
    mismatches = {
        field_name: (wanted, render(CONTRACT_FIELDS[field_name](current)))
        for field_name, wanted in expected.items()
        if not field_matches(workreq_world, current, wanted, CONTRACT_FIELDS[field_name](current))
    }
    expect(
        not mismatches,
        CONTRACT,
        f"expected vs observed contract fields of {name!r}: {mismatches}",
    )


@then(
    parsers.re(
        r'"(?P<first>[^"]+)" and "(?P<second>[^"]+)" have distinct ids'
        r" and distinct new child sessions"
    )
)
def distinct_ids_and_sessions(workreq_world: WorkRequestWorld, first: str, second: str) -> None:
    one, two = request(workreq_world, first), request(workreq_world, second)
    expect(
        one.request_id != two.request_id,
        CONTRACT,
        f"two requests share the id {one.request_id!r}",
    )
    sessions = {one.child_session_id, two.child_session_id, one.originating_session_id}
    port_requires(
        len(sessions) == 3,
        "each request names a child session of its own, new and not its originator: "
        f"{one.child_session_id!r}, {two.child_session_id!r}",
    )


# --------------------------------------------------------------------------
# Listings
# --------------------------------------------------------------------------


def listed(world: WorkRequestWorld, environment: str, principal: str) -> dict[str, str]:
    try:
        requests = world.driver.list_requests(environment, principal)
    except DriverError as error:
        raise violated(
            MEMBERS_LIST, f"{principal!r}'s listing of {environment!r} was refused: {error}"
        ) from error
    return {world.name_of(r.request_id): r.state.value for r in requests}


def check_listing(
    world: WorkRequestWorld, environment: str, principal: str, expected: dict[str, str]
) -> None:
    """Every open and in-progress request listed and no other environment's (the clause);
    nothing else, completed ones included (WR-17)."""
    observed = listed(world, environment, principal)
    missing = sorted(name for name in expected if name not in observed)
    expect(
        not missing,
        MEMBERS_LIST,
        f"expected {principal!r} to list {expected} (in any order), observed {observed}",
    )
    for name, state in expected.items():
        expect(
            observed.get(name, state) == state,
            world.state_cite(name, state),
            f"{principal!r}'s listing has {name!r} {observed.get(name)}, expected {state}",
            observed=state_kind(str(observed.get(name))),
        )
    extra = sorted(set(observed) - set(expected))
    leaked = [name for name in extra if _leaked_to(world, name, environment, principal)]
    expect(
        not leaked,
        NON_MEMBERS,
        f"{principal!r}'s listing of {environment!r} holds {leaked}, requests of an environment "
        f"{principal!r} is not a member of",
    )
    elsewhere = [n for n in extra if n not in leaked and _of_another(world, n, environment)]
    expect(
        not elsewhere,
        MEMBERS_LIST,
        f"{principal!r}'s listing of {environment!r} holds {elsewhere}, requests of another "
        "environment (one the principal belongs to as well): not this environment's list",
    )
    completed = all(world.completions.get(name) is not None for name in extra)
    expect(
        not extra,
        "WR-17",
        f"{principal!r}'s listing holds {extra} besides the open and in-progress requests",
        observed="listed" if completed else "other-state",
    )


def _of_another(world: WorkRequestWorld, name: str, environment: str) -> bool:
    made = world.requests.get(name)
    return made is not None and made.environment_id != environment


def _leaked_to(world: WorkRequestWorld, name: str, environment: str, principal: str) -> bool:
    """Whether `name` was delegated in another environment, one `principal` is not a member of."""
    made = world.requests.get(name)
    if made is None or made.environment_id == environment:
        return False
    return principal not in world.environments.get(made.environment_id, [])


@then(parsers.re(r'"(?P<principal>[^"]+)" lists in "(?P<environment>[^"]+)":'))
def lists_in_environment(
    workreq_world: WorkRequestWorld, principal: str, environment: str, datatable: list[list[str]]
) -> None:
    expected = {name: state.replace(" ", "_") for name, state in datatable[1:]}
    check_listing(workreq_world, environment, principal, expected)


@then(parsers.re(r'"(?P<principal>[^"]+)" lists no requests in "(?P<environment>[^"]+)"'))
def lists_nothing(workreq_world: WorkRequestWorld, principal: str, environment: str) -> None:
    check_listing(workreq_world, environment, principal, {})


# --------------------------------------------------------------------------
# Restarts and crashes
# --------------------------------------------------------------------------


@then("every request, listing, budget and session reads as it did before the restart")
def reads_as_before_restart(workreq_world: WorkRequestWorld) -> None:
    noted: Observation = scenario_value(
        workreq_world.before_restart, "the implementation did not restart in this scenario"
    )
    after = workreq_world.observe()
    expect(
        after == noted,
        (REQUEST_SURVIVES, LEASE_SURVIVES),
        lambda: (
            "expected everything to read as before the restart, observed:\n"
            + noted.differences(after)
        ),
    )


AS_DELEGATED = (
    "request_id",
    "kind",
    "environment_id",
    "campaign_id",
    "originating_session_id",
    "child_session_id",
    "deliverable",
    "acceptance_checks",
    "budget_slice",
    "permissions",
    "assignee",
)
"""The fields of a request that no claim, heartbeat, usage or publish moves."""


def surviving(world: WorkRequestWorld, name: str) -> WorkRequest:
    """`name` read after a crash: still there, and as it was delegated."""
    try:
        current = request(world, name)
    except DriverError as error:
        raise violated(
            REQUEST_SURVIVES, f"{name!r} was delegated before the crash; reading it after: {error}"
        ) from error
    made = world.requests[name]
    changed = {
        field: (getattr(made, field), getattr(current, field))
        for field in AS_DELEGATED
        if getattr(made, field) != getattr(current, field)
    }
    expect(
        not changed,
        REQUEST_SURVIVES,
        f"{name!r} reads otherwise after the crash than as delegated (before, after): {changed}",
    )
    return current


@then(
    parsers.re(
        r'every one of them is still held by "(?P<holder>[^"]+)" under his lease, or completed '
        r'by "(?P<completer>[^"]+)" under it with his result'
    )
)
def held_or_completed(workreq_world: WorkRequestWorld, holder: str, completer: str) -> None:
    """Holder and generation survive either way; a lease still open keeps its expiry too."""
    scenario_value(workreq_world.batch or None, "no batch of requests was made")
    for name in workreq_world.batch:
        granted = workreq_world.granted(name, holder)
        current = surviving(workreq_world, name)
        completed = current.state is RequestState.COMPLETED
        observed = (current.lease.holder, current.lease.generation, current.lease.expires_at)
        expected = (holder, granted.generation, observed[2] if completed else granted.expires_at)
        expect(
            observed == expected,
            LEASE_SURVIVES,
            f"{name!r} was held by {holder!r} at generation {granted.generation} until "
            f"{granted.expires_at} before the crash; after it, its lease reads {current.lease}",
        )
        expected_result = f"s3://results/{name.replace(' ', '-')}"
        expect(
            current.state is not RequestState.COMPLETED or current.result_ref == expected_result,
            RECORDS_RESULT,
            f"{name!r} completed with {current.result_ref!r}, not the result {completer!r} "
            f"published ({expected_result!r})",
        )


@then(
    parsers.re(
        r'"(?P<holder>[^"]+)" holds each of them not completed under a newer generation than '
        r'"(?P<other>[^"]+)" held, and was refused each completed one'
    )
)
def holds_each_newer(workreq_world: WorkRequestWorld, holder: str, other: str) -> None:
    claims = scenario_value(workreq_world.late_claims or None, f"{holder!r} claimed none of them")
    for name, outcome in claims.items():
        port_requires(
            not isinstance(outcome, DriverError) or outcome.definite,
            f"{holder!r}'s claim of {name!r} ended indeterminate, outside any batch: {outcome}",
        )
        completed = request(workreq_world, name).state is RequestState.COMPLETED
        if completed:
            expect(
                isinstance(outcome, DriverError),
                CLOSES_ONCE,
                f"{name!r} is completed, yet {holder!r}'s claim of it was granted {outcome}",
            )
            continue
        expect(
            isinstance(outcome, Lease),
            CLAIMABLE_AGAIN,
            f"{name!r} was not completed and its lease had run out, yet {holder!r}'s claim of "
            f"it was refused: {outcome}",
        )
        holds_newer(workreq_world, holder, name, other, None)
