"""A divergence never blinds the kit: checks go on past a reading's failed check, a declared
reading sets the kit's checks of it aside, and a divergence is charged where it belongs."""

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
    expect,
    open_reading_log,
    violated,
)
from conformance.spec.registry import default_registry
from conformance.stream.results import Status

CLAUSE = "AC-ARMONIA-WORKREQ-001.7/fenced"
MACHINE_CRITERIA = tuple(f"AC-ARMONIA-WORKREQ-001.{n}" for n in range(1, 14))


def noted(declared: dict[str, str] | None = None) -> ReadingLog:
    log = ReadingLog(declared=declared or {})
    close = open_reading_log(log)
    try:
        expect(False, "WR-13", "accepted a non-member assignee")
        expect(True, CLAUSE, "a clause check after the divergence still runs")
    finally:
        close()
    return log


def test_a_failed_check_of_a_reading_is_noted_and_the_scenario_goes_on() -> None:
    log = noted()
    assert [v.cites for _, v in log.diverged] == [("WR-13",)]
    assert not log.set_aside


def test_a_clause_check_after_a_divergence_still_fails_the_scenario() -> None:
    log = ReadingLog()
    close = open_reading_log(log)
    try:
        expect(False, "WR-13", "diverged first")
        with pytest.raises(ClauseViolation):
            expect(False, CLAUSE, "then a clause broke")
    finally:
        close()
    verdict = weighed(Status.FAILED, [CLAUSE], None, log)
    assert verdict.status is Status.FAILED
    assert "diverged at setup" in verdict.note


def test_a_check_of_a_declared_reading_is_set_aside_and_the_scenario_passes() -> None:
    log = noted({"WR-13": "assignee-unchecked"})
    assert not log.diverged and len(log.set_aside) == 1
    verdict = weighed(Status.PASSED, [], None, log)
    assert verdict.status is Status.PASSED
    assert "WR-13 = assignee-unchecked" in verdict.note


def test_an_undeclared_divergence_in_a_passing_scenario_makes_it_diverged() -> None:
    verdict = weighed(Status.PASSED, [], None, noted())
    assert (verdict.status, verdict.violated) == (Status.DIVERGED, ["WR-13"])


def test_a_scenario_stopped_by_a_declared_reading_verified_nothing_more() -> None:
    """A raised check (the step cannot go on) of a reading declared otherwise: not applicable,
    never passed."""
    error = violated("WR-13", "the delegation was to be refused")
    verdict = weighed(Status.DIVERGED, ["WR-13"], error, ReadingLog(declared={"WR-13": "x"}))
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
    """Not to every criterion the property names (WR-13 bears on 001.1 and 001.13 alone)."""
    charged = {
        criterion: fanned_status(Status.DIVERGED, ["WR-13"], criterion, MACHINE_CRITERIA)
        for criterion in MACHINE_CRITERIA
    }
    diverged = {c for c, status in charged.items() if status is Status.DIVERGED}
    assert diverged == set(default_registry().interpretation("WR-13").criteria)
    assert {charged[c] for c in MACHINE_CRITERIA if c not in diverged} == {Status.NOT_APPLICABLE}


def test_a_divergence_followed_to_the_end_verifies_every_other_criterion() -> None:
    statuses = {
        criterion: fanned_status(
            Status.DIVERGED, ["WR-13"], criterion, MACHINE_CRITERIA, followed=True
        )
        for criterion in MACHINE_CRITERIA
    }
    assert statuses["AC-ARMONIA-WORKREQ-001.1"] is Status.DIVERGED
    assert statuses["AC-ARMONIA-WORKREQ-001.7"] is Status.PASSED


def test_a_followed_divergence_names_each_reading_it_followed() -> None:
    divergence = FollowedDivergence({"WR-13": {"zero-usage-accepted"}}, {}, default_registry())
    assert divergence.interpretations_only
    assert divergence.readings() == ["WR-13=zero-usage-accepted"]


def test_a_violation_that_did_not_replay_is_still_the_violation() -> None:
    seen = violated(CLAUSE, "a second grant with the same generation")
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
