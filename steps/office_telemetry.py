"""Office Then steps about the rate-limit counter and the warning logs (REQ-OFFICE-ASSIGN-RATE-003).

The counter is read under the names the implementation declares (its sample
name, its reason label and the label's three values), summed over any other
labels it carries. Warnings are read through the protocol's field names; a
warning may carry more fields, and other warnings may be logged beside it, so
a check looks for a warning that carries what the clause asks and lacks what
the clause forbids.
"""

from __future__ import annotations

import re

from pytest_bdd import parsers, then

from conformance.driver import Outcome, RateLimitReason, WarningLog
from conformance.oracle.office_shapes import FAIL_OPEN_CLAUSES
from conformance.oracle.office_telemetry import (
    LOGGED_CLAUSES,
    MOVE_CLAUSES,
    REQUIRED_FIELD_CLAUSES,
    Telemetry,
    holds_identifier,
    moves_between,
    without_field,
)
from conformance.spec.clause_check import expect, port_requires, scenario_requires
from conformance.steps.office_scene import SINCE, OfficeScene, outcome_cites, quiet_cites

_MOVE = re.compile(r"(\w+) \+(\d+)")


def parse_moves(office: OfficeScene, text: str) -> dict[RateLimitReason, float]:
    """`none`, or `allowance_exhausted +1 and task_unattributed +1`."""
    if text == "none":
        return {}
    moves = {RateLimitReason(reason): float(amount) for reason, amount in _MOVE.findall(text)}
    leftover = re.sub(r",|\band\b", "", _MOVE.sub("", text)).strip()
    scenario_requires(
        bool(moves) and not leftover, f"{text!r} is neither 'none' nor 'reason +n and ...'"
    )
    return moves


def declared(telemetry: Telemetry, moves: dict[RateLimitReason, float]) -> dict[str, float]:
    """Canonical reasons as the implementation's own label values."""
    return {telemetry.label_of(reason): amount for reason, amount in moves.items()}


def check_moves(office: OfficeScene, since: str, expected: dict[RateLimitReason, float]) -> None:
    before = office.baseline(since).telemetry
    after = office.telemetry()
    moved = moves_between(before, after)
    want = declared(after, expected)
    cites = tuple(c for reason in expected for c in MOVE_CLAUSES[reason])
    counter = office.vocabulary.rate_limit_counter
    unattributed = after.label_of(RateLimitReason.TASK_UNATTRIBUTED)
    counted_unattributed = bool(moved) and set(moved) == {unattributed}
    wakes = office.wakes if since != "in this scenario" else []
    expect(
        moved == want,
        cites or quiet_cites(wakes, counted_unattributed=counted_unattributed),
        f"expected {counter} to move {since} by {want or 'nothing'}, observed {moved or 'nothing'} "
        f"(reason label {office.vocabulary.reason_label!r})",
        observed="counted" if counted_unattributed else "other-figures",
    )


@then(parsers.re(rf"the rate-limit counters moved {SINCE} by: (?P<moves>.+)"))
def rate_limit_moves(office: OfficeScene, since: str, moves: str) -> None:
    check_moves(office, since, parse_moves(office, moves))


@then(parsers.re(rf"no rate-limit counter moved {SINCE}"))
def no_rate_limit_move(office: OfficeScene, since: str) -> None:
    check_moves(office, since, {})


@then(
    "every sample of the rate-limit counter carries its reason label, "
    "with one of the three declared reasons"
)
def rate_limit_reasons_closed(office: OfficeScene) -> None:
    telemetry = office.telemetry()
    vocabulary = office.vocabulary
    allowed = {telemetry.label_of(reason) for reason in RateLimitReason}
    samples = telemetry.rate_limit_samples()
    stray = [s.labels for s in samples if s.labels.get(vocabulary.reason_label) not in allowed]
    expect(
        bool(samples) and not stray,
        "AC-OFFICE-ASSIGN-RATE-003.1/closed-reasons",
        f"every {vocabulary.rate_limit_counter} sample carries {vocabulary.reason_label!r} with "
        f"one of {sorted(allowed)}; samples {[s.labels for s in samples] or 'none'}, "
        f"outside the set {stray}",
    )


@then(
    parsers.parse(
        'the rate-limit counter for "{reason}" rose by {delta:d} in this scenario, '
        "all in one series"
    )
)
def reason_rose_in_one_series(office: OfficeScene, reason: str, delta: int) -> None:
    """Refusals that differ only by task and agent must land in one series: a label telling them
    apart would grow with traffic (003.2). Other static labels may split a reason into several
    series; only one of them may move here."""
    telemetry = office.telemetry()
    label = telemetry.label_of(RateLimitReason(reason))
    before = office.baseline("in this scenario").telemetry
    rise = moves_between(before, telemetry).get(label, 0.0)
    expect(
        rise == delta,
        "AC-OFFICE-ASSIGN-RATE-003.1/counted-by-reason",
        f"expected {label!r} to rise by {delta} in this scenario, it rose by {rise:g}",
    )
    old, new = before.series_of(label), telemetry.series_of(label)
    moved = [dict(key) for key, value in new.items() if value != old.get(key, 0.0)]
    expect(
        len(moved) == 1,
        "AC-OFFICE-ASSIGN-RATE-003.2/no-identifier-labels",
        f"refusals on two tasks by two agents moved {len(moved)} series of {label!r}: {moved}",
    )


@then("no label of the rate-limit counter holds an identifier of a workspace, agent, task or run")
def no_identifier_labels(office: OfficeScene) -> None:
    identifiers = office.identifiers | {run.run_id for run in office.driver.list_runs()}
    labels = {
        (name, value)
        for sample in office.telemetry().rate_limit_samples()
        for name, value in sample.labels.items()
    }
    leaks = sorted(
        (name, value, ident)
        for name, value in labels
        for ident in identifiers
        if holds_identifier(value, ident)
    )
    expect(
        not leaks,
        "AC-OFFICE-ASSIGN-RATE-003.2/no-identifier-labels",
        f"labels of the rate-limit counter carry identifiers (label, value, identifier): {leaks}",
    )


@then(
    parsers.parse(
        "one reading of the telemetry surface shows, since the scenario began, a declared dedup "
        'counter risen and the rate-limit counter up by 1 for "{reason}"'
    )
)
def one_surface(office: OfficeScene, reason: str) -> None:
    before = office.baseline("in this scenario").telemetry
    reading = office.telemetry()
    label = reading.label_of(RateLimitReason(reason))
    dedup_rise = reading.dedup_total() - before.dedup_total()
    rate_rise = moves_between(before, reading).get(label, 0.0)
    expect(
        dedup_rise >= 1 and rate_rise == 1,
        "AC-OFFICE-ASSIGN-RATE-003.6/same-surface",
        f"one reading shows the declared dedup counters {office.vocabulary.dedup_counters} up by "
        f"{dedup_rise:g} (expected at least 1) and {office.vocabulary.rate_limit_counter} "
        f"{{{office.vocabulary.reason_label}={label!r}}} up by {rate_rise:g} (expected 1)",
    )


@then("every refusal among those wakes moved the rate-limit counter and was logged")
def refusals_counted_and_logged(office: OfficeScene) -> None:
    """Each refusal of a batch counted once and logged (003.1, 003.3), however many there were:
    which of the wakes a concurrent batch refuses is the race's, not the scenario's."""
    refused = [wake for wake in office.wakes if wake.outcome == Outcome.RATE_LIMITED.value]
    check_refusals(office, len(refused), {})


@then(
    "each of those wakes that met the failed count read was admitted, counted and logged, "
    "and each other was refused, counted and logged"
)
def batch_meets_the_failed_read(office: OfficeScene) -> None:
    """Whether a read inside a batch meets an armed failure is the implementation's (the
    port's hook leaves it so): a degraded count or a degraded warning tells that a wake did, and
    that wake goes through; every other wake, the allowance used up, is a refusal. An admission
    that neither explains is judged as the over-admission it shows (a failed read kept silent
    looks the same from outside, and 002.2's scenarios of one wake catch that one)."""
    telemetry = office.telemetry()
    moved = moves_between(office.baseline("by those wakes").telemetry, telemetry)
    counted = int(moved.get(telemetry.label_of(RateLimitReason.COUNT_READ_FAILED), 0.0))
    logged = len(degraded_warnings(office.warnings_since_action()))
    met = max(counted, logged)
    port_requires(met <= 1, f"the hook fails one count read, once; {met} wakes met a failed one")
    admitted = [wake for wake in office.wakes if wake.outcome == Outcome.QUEUED.value]
    if met:
        expect(
            bool(admitted),
            FAIL_OPEN_CLAUSES,
            f"a wake evaluated at once met the failed count read (counted {counted}, logged "
            f"{logged}), so it was to be admitted; observed {outcomes(office)}",
        )
        expect(logged > 0, LOGGED_CLAUSES["degraded admission"], "the admission was not logged")
    for number, wake in enumerate(office.wakes, start=1):
        if wake in admitted[:met]:
            continue
        expect(
            wake.outcome == Outcome.RATE_LIMITED.value,
            outcome_cites(wake, [Outcome.RATE_LIMITED.value]),
            f"wake {number} of those at once met no failed read that was counted or logged, so "
            f"it was to be refused, the allowance being used up; observed {outcomes(office)}",
        )
    degraded = {RateLimitReason.COUNT_READ_FAILED: float(met)} if met else {}
    check_refusals(office, len(office.wakes) - len(admitted), degraded)


def outcomes(office: OfficeScene) -> list[str | None]:
    return [wake.outcome for wake in office.wakes]


def degraded_warnings(warnings: list[WarningLog]) -> list[WarningLog]:
    """Warnings of admissions without a count: 002.2's own, which name the task and an error,
    and carry no count (a store's own warning of the failed query names no task)."""
    return [
        warning
        for warning in warnings
        if "task_id" in warning.fields
        and "observed_count" not in warning.fields
        and str(warning.fields.get("error") or "").strip()
    ]


def check_refusals(
    office: OfficeScene, refused: int, besides: dict[RateLimitReason, float]
) -> None:
    """The batch's refusals each counted and logged; `besides`, the batch's other moves. Each
    reason that was to move, or moved, is judged apart, so a count missing for one reason
    blames that reason's clauses only."""
    expected = {RateLimitReason.ALLOWANCE_EXHAUSTED: float(refused)} if refused else {}
    expected |= besides
    telemetry = office.telemetry()
    moved = moves_between(office.baseline("by those wakes").telemetry, telemetry)
    for reason in RateLimitReason:
        label = telemetry.label_of(reason)
        want, got = expected.get(reason, 0.0), moved.get(label, 0.0)
        if want or got:
            expect(
                got == want,
                MOVE_CLAUSES[reason],
                f"expected {office.vocabulary.rate_limit_counter}{{{label}}} to move by {want:g} "
                f"by those wakes, observed {got:g}",
            )
    stray = set(moved) - {telemetry.label_of(reason) for reason in RateLimitReason}
    expect(
        not stray,
        "AC-OFFICE-ASSIGN-RATE-003.1/counted-by-reason",
        f"those wakes moved {office.vocabulary.rate_limit_counter} under labels that are no "
        f"declared reason: {sorted(stray)}",
    )
    logged = [
        warning
        for warning in office.warnings_since_action()
        if {"task_id", "observed_count", "allowance"} <= set(warning.fields)
    ]
    expect(
        len(logged) >= refused,
        LOGGED_CLAUSES["refusal"],
        f"{refused} refusals, {len(logged)} refusal warnings: {[w.fields for w in logged]}",
    )


# --------------------------------------------------------------------------
# Warning logs
# --------------------------------------------------------------------------


def carries(warning: WarningLog, name: str, expected: str, office: OfficeScene) -> bool:
    """A field holds the expected value; a reason may be canonical or the declared label."""
    if name not in warning.fields:
        return False
    observed = str(warning.fields[name])
    if name == "reason":
        reason = RateLimitReason(expected)
        return observed in (reason.value, office.vocabulary.reasons.of(reason))
    return observed == expected


def expected_fields(office: OfficeScene, table: list[list[str]]) -> dict[str, str]:
    """The fields a step's table asks of a warning, counts in N worked out."""
    return {name: office.cell(value) for name, value in table[1:]}


def matching_warnings(office: OfficeScene, table: list[list[str]]) -> list[WarningLog]:
    wanted = expected_fields(office, table)
    return [
        warning
        for warning in office.warnings_since_action()
        if all(carries(warning, name, value, office) for name, value in wanted.items())
    ]


@then(
    parsers.re(
        r"a warning logged by (?:that wake|those wakes) names the "
        r"(?P<what>refusal|degraded admission|unattributed admission) with:"
    )
)
def warning_names(office: OfficeScene, what: str, datatable: list[list[str]]) -> None:
    found = matching_warnings(office, datatable)
    expect(
        bool(found),
        LOGGED_CLAUSES[what],
        f"expected a warning with {expected_fields(office, datatable)}, the wake logged "
        f"{office.warnings_since_action() or 'no warning'}",
    )
    office.checked_warnings = found


@then(parsers.parse("each of those {count:d} refusals was logged as a warning with:"))
def each_refusal_logged(office: OfficeScene, count: int, datatable: list[list[str]]) -> None:
    found = matching_warnings(office, datatable)
    expect(
        len(found) >= count,
        LOGGED_CLAUSES["refusal"],
        f"expected a warning with {expected_fields(office, datatable)} for each of {count} "
        f"refusals, found {len(found)} among {office.warnings_since_action()}",
    )


@then(parsers.re(r'that warning has no "(?P<name>[^"]+)" field'))
def warning_lacks(office: OfficeScene, name: str) -> None:
    scenario_requires(bool(office.checked_warnings), "no warning has been found yet")
    office.checked_warnings = without_field(office.checked_warnings, name, "the warning")


@then(parsers.re(r'that warning has a non-empty "(?P<name>[^"]+)" field'))
def warning_carries(office: OfficeScene, name: str) -> None:
    scenario_requires(bool(office.checked_warnings), "no warning has been found yet")
    kept = [w for w in office.checked_warnings if str(w.fields.get(name) or "").strip()]
    expect(
        bool(kept),
        REQUIRED_FIELD_CLAUSES[name],
        f"the warning must carry a non-empty {name!r}; "
        f"found {[w.fields for w in office.checked_warnings]}",
    )
    office.checked_warnings = kept
