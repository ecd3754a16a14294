"""A divergence never blinds the kit: checks go on past a reading's failed check, a declared
reading sets aside only the answers it allows, an answer no reading allows is a break, and a
divergence is charged where it belongs."""

from __future__ import annotations

import pytest
from hypothesis.errors import FlakyFailure

from conformance.driver import DriverError, ErrorCode
from conformance.properties.catalogue import fanned_status
from conformance.properties.following import OffTheTape, Tape, replaying
from conformance.running.failure_evidence import unreplayed_violation
from conformance.running.reading_verdict import weighed
from conformance.spec.clause_check import (
    ClauseViolation,
    FollowedDivergence,
    ReadingLog,
    ScenarioError,
    expect,
    open_reading_log,
    violated,
)
from conformance.spec.evidence import Ledger, Tally, open_ledger
from conformance.spec.registry import ANSWERS, default_registry
from conformance.stream.results import Status

MACHINE_CRITERIA = tuple(f"AC-ARMONIA-WORKREQ-001.{n}" for n in range(1, 14))


def noted(declared: dict[str, str] | None = None) -> ReadingLog:
    log = ReadingLog(declared=declared or {})
    close = open_reading_log(log)
    try:
        expect(False, "WR-23", "accepted a non-member assignee", observed="accepted")
        expect(
            True,
            "AC-ARMONIA-WORKREQ-001.7/fenced",
            "a clause check after the divergence still runs",
        )
    finally:
        close()
    return log


def test_a_failed_check_of_a_reading_is_noted_and_the_scenario_goes_on() -> None:
    log = noted()
    assert [v.cites for _, v in log.diverged] == [("WR-23",)]
    assert not log.set_aside and not log.broken


def test_a_clause_check_after_a_divergence_still_fails_the_scenario() -> None:
    log = ReadingLog()
    close = open_reading_log(log)
    try:
        expect(False, "WR-23", "diverged first", observed="accepted")
        with pytest.raises(ClauseViolation):
            expect(False, "AC-ARMONIA-WORKREQ-001.7/fenced", "then a clause broke")
    finally:
        close()
    verdict = weighed(Status.FAILED, ["AC-ARMONIA-WORKREQ-001.7/fenced"], None, log)
    assert verdict.status is Status.FAILED
    assert "diverged at setup" in verdict.note


def test_a_check_of_a_declared_reading_is_set_aside_and_the_scenario_passes() -> None:
    log = noted({"WR-23": "assignee-unchecked"})
    assert not log.diverged and len(log.set_aside) == 1
    verdict = weighed(Status.PASSED, [], None, log)
    assert verdict.status is Status.PASSED
    assert "WR-23 = assignee-unchecked" in verdict.note


def test_an_undeclared_divergence_in_a_passing_scenario_makes_it_diverged() -> None:
    verdict = weighed(Status.PASSED, [], None, noted())
    assert (verdict.status, verdict.violated) == (Status.DIVERGED, ["WR-23"])


def judged_in_a_log(
    declared: dict[str, str], cite: str, allows: dict[str, set[str]] | None
) -> Ledger:
    """One failed check of `cite` whose answer `allows` names the alternatives of, noted in a
    scenario's log under `declared`; the ledger it leaves."""
    ledger, log = Ledger(), ReadingLog(declared=declared)
    close_ledger, close_log = open_ledger(ledger), open_reading_log(log)
    try:
        expect(False, cite, "the answer observed", allows=allows)
    finally:
        close_log()
        close_ledger()
    return ledger


def test_a_declared_alternative_sets_aside_only_the_answers_it_allows() -> None:
    """Declaring usage of 0 accepted excuses usage of 0, not an answer it does not allow."""
    declared = {"WR-24": "zero-usage-accepted"}
    allowed = judged_in_a_log(declared, "WR-24", {"WR-24": {"zero-usage-accepted"}})
    assert allowed.tallies["WR-24"] == Tally(set_aside=1)
    forbidden = judged_in_a_log(declared, "WR-24", {})
    assert forbidden.tallies["WR-24"] == Tally(broken=1)


def test_an_answer_no_alternative_allows_breaks_the_reading_undeclared_too() -> None:
    ledger = judged_in_a_log({}, "WR-22", {"WR-22": set()})
    assert ledger.tallies["WR-22"] == Tally(broken=1)
    explained = judged_in_a_log({}, "WR-23", {"WR-23": {"assignee-unchecked"}})
    assert explained.tallies["WR-23"] == Tally(diverged=["WR-23=assignee-unchecked"])


def test_a_reading_with_no_alternative_allows_nothing_but_itself() -> None:
    """With no alternative registered, no kind of answer is allowed: the failed check is a
    break, never a divergence."""
    for observed in ANSWERS:
        ledger = Ledger()
        closers = (open_ledger(ledger), open_reading_log(ReadingLog()))
        try:
            expect(False, "WR-22", "accepted an empty deliverable", observed=observed)
        finally:
            for close in reversed(closers):
                close()
        assert ledger.tallies["WR-22"] == Tally(broken=1), observed


def test_a_scenario_s_check_of_a_reading_that_says_no_kind_of_answer_is_an_error_of_the_kit() -> (
    None
):
    """Else every alternative would excuse it, whatever it saw."""
    with pytest.raises(ScenarioError, match="says not which kind of answer"):
        judged_in_a_log({"WR-23": "assignee-unchecked"}, "WR-23", None)


def test_declaring_the_kit_s_reading_and_answering_otherwise_is_a_break() -> None:
    ledger = judged_in_a_log({"WR-23": "kit"}, "WR-23", {"WR-23": {"assignee-unchecked"}})
    assert ledger.tallies["WR-23"] == Tally(broken=1)


def test_a_broken_reading_fails_the_scenario_that_went_on_past_it() -> None:
    log = ReadingLog()
    close = open_reading_log(log)
    try:
        expect(False, "WR-22", "accepted an empty deliverable", allows={"WR-22": set()})
    finally:
        close()
    verdict = weighed(Status.PASSED, [], None, log)
    assert (verdict.status, verdict.violated) == (Status.FAILED, ["WR-22"])


def test_a_scenario_stopped_by_a_declared_reading_verified_nothing_more() -> None:
    """A raised check (the step cannot go on) of a reading declared otherwise, whose answer the
    declared alternative allows: not applicable, never passed."""
    error = violated("WR-23", "the delegation was to be refused")
    declared = ReadingLog(declared={"WR-23": "assignee-unchecked"})
    verdict = weighed(Status.DIVERGED, ["WR-23"], error, declared)
    assert verdict.status is Status.NOT_APPLICABLE


def test_a_kit_error_after_a_divergence_is_the_divergence_it_followed() -> None:
    verdict = weighed(Status.ERRORED, [], AttributeError("no code"), noted())
    assert verdict.status is Status.DIVERGED


@pytest.mark.parametrize("status", [Status.TIMEOUT, Status.UNDEFINED])
def test_a_fault_or_a_missing_step_keeps_its_verdict_after_a_divergence(status: Status) -> None:
    assert weighed(status, [], None, noted()).status is status


def test_a_refused_call_after_a_divergence_keeps_its_verdict() -> None:
    error = DriverError(ErrorCode.INTERNAL, "boom", definite=False)
    assert weighed(Status.ERRORED, [], error, noted()).status is Status.ERRORED


def test_a_divergence_is_charged_to_the_criteria_its_reading_is_registered_under() -> None:
    """Not to every criterion the property names (WR-3 bears on five of the thirteen)."""
    charged = {
        criterion: fanned_status(
            Status.DIVERGED, ["WR-3"], criterion, {"WR-3": Tally(diverged=["WR-3=forfeit"])}
        )
        for criterion in MACHINE_CRITERIA
    }
    diverged = {c for c, status in charged.items() if status is Status.DIVERGED}
    assert diverged == set(default_registry().interpretation("WR-3").criteria)
    assert {charged[c] for c in MACHINE_CRITERIA if c not in diverged} == {Status.NOT_APPLICABLE}


def test_a_checked_criterion_passes_beside_a_divergence_and_the_others_are_unexercised() -> None:
    """What the property's checks of a criterion's clauses showed is that criterion's record: a
    check that held is evidence; no check at all is not applicable, never passed."""
    checks = {
        "AC-ARMONIA-WORKREQ-001.7/fenced": Tally(held=3),
        "WR-3": Tally(diverged=["WR-3=forfeit"]),
    }
    statuses = {
        criterion: fanned_status(Status.DIVERGED, ["WR-3"], criterion, checks)
        for criterion in MACHINE_CRITERIA
    }
    assert statuses["AC-ARMONIA-WORKREQ-001.1"] is Status.DIVERGED
    assert statuses["AC-ARMONIA-WORKREQ-001.7"] is Status.PASSED
    assert statuses["AC-ARMONIA-WORKREQ-001.2"] is Status.NOT_APPLICABLE


def test_a_followed_divergence_names_each_reading_it_followed() -> None:
    divergence = FollowedDivergence({"WR-24": {"zero-usage-accepted"}}, {}, default_registry())
    assert divergence.interpretations_only and divergence.explained
    assert divergence.readings() == ["WR-24=zero-usage-accepted"]


def test_a_violation_that_did_not_replay_is_still_the_violation() -> None:
    seen = violated("AC-ARMONIA-WORKREQ-001.7/fenced", "a second grant with the same generation")
    flaky = FlakyFailure("did not replay", [seen])
    unwrapped = unreplayed_violation(flaky)
    assert unwrapped is seen and "did not fail again" in seen.detail


def test_a_step_judged_again_answers_from_its_tape() -> None:
    tape = Tape()
    calls: list[str] = []

    def live(answer: str) -> str:
        calls.append(answer)
        return answer

    assert tape.answer("claim", ("r1",), lambda: live("first")) == "first"
    assert tape.draw(lambda: 7) == 7
    with replaying(tape):
        assert tape.answer("claim", ("r1",), lambda: live("again")) == "first"
        assert tape.draw(lambda: 8) == 7
        assert tape.answer("publish", ("r1",), lambda: live("new")) == "new"
    assert calls == ["first", "new"]


def test_a_step_judged_again_on_another_path_is_off_the_tape() -> None:
    tape = Tape()
    tape.answer("claim", ("r1",), lambda: "granted")
    with replaying(tape), pytest.raises(OffTheTape):
        tape.answer("heartbeat", ("r1",), lambda: "renewed")
    with replaying(tape), pytest.raises(OffTheTape):
        tape.draw(lambda: 1)


def test_a_taped_refusal_is_refused_again() -> None:
    tape = Tape()

    def refuse() -> None:
        raise DriverError(ErrorCode.LEASE_HELD, "held")

    with pytest.raises(DriverError):
        tape.answer("claim", ("r1",), refuse)
    with replaying(tape), pytest.raises(DriverError):
        tape.answer("claim", ("r1",), lambda: "granted")


def test_distinct_failures_found_at_once_are_one_violation_of_them_all() -> None:
    """Hypothesis raises the distinct failures of one search as a group; a group is never an
    error of the kit that would leave the clauses it broke unblamed."""
    first = violated("AC-ARMONIA-WORKREQ-001.7/fenced", "a second grant with the same generation")
    first.add_note("the first counterexample")
    second = violated("AC-ARMONIA-WORKREQ-001.9/no-budget-created", "budget made")
    joined = unreplayed_violation(ExceptionGroup("two distinct failures", [first, second]))
    assert isinstance(joined, ClauseViolation)
    assert joined.cites == (
        "AC-ARMONIA-WORKREQ-001.7/fenced",
        "AC-ARMONIA-WORKREQ-001.9/no-budget-created",
    )
    assert "failure 2 of 2: budget made" in joined.detail
    assert [part.__notes__ for part in joined.parts[:1]] == [["the first counterexample"]]
    assert joined.parts == (first, second), "each with its own counterexample"
    lone = ExceptionGroup("one", [first, ValueError("not a check")])
    assert unreplayed_violation(lone) is first
    assert "also met: ValueError('not a check')" in first.detail


def test_a_replay_that_broke_other_clauses_is_a_violation_of_both() -> None:
    """A violation type per set of clauses makes a replay that breaks another set flaky to
    Hypothesis: both breaks stand, and the note says the replay failed otherwise, not that it
    did not fail."""
    first = violated("AC-ARMONIA-WORKREQ-001.7/fenced", "a second grant")
    second = violated("AC-ARMONIA-WORKREQ-001.9/no-budget-created", "budget made")
    joined = unreplayed_violation(FlakyFailure("inconsistent", [first, second]))
    assert isinstance(joined, ClauseViolation)
    assert joined.cites == (
        "AC-ARMONIA-WORKREQ-001.7/fenced",
        "AC-ARMONIA-WORKREQ-001.9/no-budget-created",
    )
    assert "broke other clauses" in joined.detail and "did not fail again" not in joined.detail


def test_breaks_a_model_noted_before_an_error_are_raised_not_dropped() -> None:
    """An error the implementation answered after the model noted breaks ends the example: the
    breaks still fail their clauses, the error noted on them."""
    from conformance.properties.surprises import Surprises

    surprises = Surprises()
    surprises.note(violated("AC-ARMONIA-WORKREQ-001.7/fenced", "a second grant"), "step 3")
    stopped = DriverError(ErrorCode.INTERNAL, "the row is locked")
    with pytest.raises(ClauseViolation) as raised:
        surprises.raise_if_any(after=stopped)
    assert (
        raised.value.cites == ("AC-ARMONIA-WORKREQ-001.7/fenced",)
        and raised.value.__cause__ is stopped
    )
    assert any("the row is locked" in note for note in raised.value.__notes__)
