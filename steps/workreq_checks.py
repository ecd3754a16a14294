"""Work-request Then steps (REQ-ARMONIA-WORKREQ-001): every check names the clause it enforces.

A step prefixed "as WR-n reads it," checks a value that only the registered
interpretation fixes: it cites the interpretation alone, so an implementation
that reads the open question otherwise is `diverged`, not failed. Those
scenarios check the clause-level invariant (conservation, a refusal, a newer
generation) first, without the prefix.
"""

from __future__ import annotations

import re

from pytest_bdd import parsers, then

from conformance.driver import (
    BudgetSnapshot,
    DriverError,
    ErrorCode,
    RequestState,
    WorkRequest,
)
from conformance.oracle.grants import folded_within, within
from conformance.oracle.work_request_cites import (
    GRANT_NAMES_EXACT,
)
from conformance.spec.clause_check import (
    Cite,
    cites_of,
    expect,
    port_requires,
    scenario_value,
    violated,
)
from conformance.spec.registry import INTERPRETATION_ID
from conformance.steps.common import READING, quoted, readings_named
from conformance.steps.workreq_world import (
    UNKNOWN_ENVIRONMENT,
    WRITES_NOTHING,
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


@then("the attempt is refused, as no amount may run budget backwards, and nothing changes")
def refused_below_zero(workreq_world: WorkRequestWorld) -> None:
    """Every reading of bad input refuses an amount below zero: taking it would hand back
    budget nobody returned. Which code it gets is the implementation's; that it made nothing
    and moved no budget is this clause's, while whether a refused delegation keeps a cap slot
    is WR-4's, as for every refusal."""
    attempt = scenario_value(workreq_world.last, "no attempt was made")
    expect(
        attempt.error is not None,
        "AC-ARMONIA-WORKREQ-001.9/no-negative-amount",
        f"expected {attempt.what} to be refused under every reading; observed it accepted",
    )
    after = workreq_world.observe()
    expect(
        after.budgets == attempt.before.budgets,
        "AC-ARMONIA-WORKREQ-001.9/no-negative-amount",
        lambda: "a refused amount below zero moved budget:\n" + attempt.before.differences(after),
    )
    check_nothing_changed(workreq_world, ("AC-ARMONIA-WORKREQ-001.9/no-negative-amount",))


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
        "AC-ARMONIA-WORKREQ-001.9/no-budget-created",
        f"a slice of {made.budget_slice} its originator had not left was accepted, and "
        f"{campaign!r} paid {before - after} of it: the lineage now holds budget nobody gave it",
    )


@then("the listing is refused and nothing changes")
def listing_refused(workreq_world: WorkRequestWorld) -> None:
    attempt = scenario_value(workreq_world.last, "no attempt was made")
    cites = ("AC-ARMONIA-WORKREQ-001.5/non-members-cannot",)
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
            cite_or_reading(reading, "AC-ARMONIA-WORKREQ-001.5/non-members-cannot"),
            f"the non-member's refusal {observed} does not read like an unknown environment's "
            f"{expected}",
            observed="other-refusal",
        )
        return
    raise violated(
        cite_or_reading(reading, "AC-ARMONIA-WORKREQ-001.5/non-members-cannot"),
        "listing an environment that does not exist was answered with a list",
        observed="accepted",
    )


@then(
    "the child was granted nothing its originator lacks: the attempt was refused with "
    '"permission_escalation" and nothing changed, or the request narrowed the grant'
)
def refused_or_narrowed(workreq_world: WorkRequestWorld) -> None:
    attempt = scenario_value(workreq_world.last, "no delegation was tried")
    cites = (
        "AC-ARMONIA-WORKREQ-001.2/no-wider-grant",
        "AC-ARMONIA-WORKREQ-001.9/no-authority-created",
    )
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
        "AC-ARMONIA-WORKREQ-001.7/fenced",
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
        cite_or_reading(
            reading,
            (
                "AC-ARMONIA-WORKREQ-001.1/slice-deducted",
                "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
            ),
        ),
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
        "AC-ARMONIA-WORKREQ-001.9/no-budget-created",
        f"expected a total of {world.campaigns[campaign]} with available + reserved + spent "
        f"no more than it, none negative; observed total {snapshot.total}, (available, "
        f"reserved, spent) {parts}",
    )
    expect(
        min(parts) >= 0,
        "AC-ARMONIA-WORKREQ-001.9/no-budget-created",
        f"a budget part is negative: {parts}",
    )
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
        ("AC-ARMONIA-WORKREQ-001.6/closes-once", "AC-ARMONIA-WORKREQ-001.9/no-budget-created"),
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
        cite_or_reading(reading, "AC-ARMONIA-WORKREQ-001.6/closes-once"),
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
        (
            "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
            "AC-ARMONIA-WORKREQ-001.13/usage-within-slice",
        ),
        f"expected {name!r} (spent, slice) {(int(spent), int(budget_slice))}, observed {observed}",
    )


@then(parsers.re(r'"(?P<name>[^"]+)" has spent no more than its slice'))
def spent_within_slice(workreq_world: WorkRequestWorld, name: str) -> None:
    """Whatever an implementation does with too much usage (refuse it, WR-2, or cap it), the
    slice is a ceiling."""
    current = request(workreq_world, name)
    expect(
        current.budget_spent <= current.budget_slice,
        "AC-ARMONIA-WORKREQ-001.13/usage-within-slice",
        f"{name!r} has spent {current.budget_spent} of a slice of {current.budget_slice}",
    )
