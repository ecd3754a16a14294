"""The verdict algebra alone: a criterion's verdict from the tallies its clauses left."""

from __future__ import annotations

import pytest

from conformance.reports.summary import criterion_verdicts, run_succeeded
from conformance.spec.clause_check import ReadingLog, expect, open_reading_log
from conformance.spec.evidence import Ledger, Tally, open_ledger
from conformance.spec.registry import default_registry
from conformance.stream.results import Footer, ResultsRun, ScenarioResult, Shard, Status
from conformance.verdicts import ClauseState, judge_criterion, run_evidence
from tests.runs import STARTED, a_header, held_checks

REGISTRY = default_registry()
FIRST = "AC-OFFICE-ASSIGN-RATE-001.1"
SECOND = "AC-OFFICE-ASSIGN-RATE-001.2"


def record(
    criterion: str,
    status: Status = Status.PASSED,
    checks: dict[str, Tally] | None = None,
    **more: object,
) -> ScenarioResult:
    return ScenarioResult(
        key=f"f.feature::{criterion} {status.value} {len(checks or {})} {sorted(more)}",
        criterion=criterion,
        feature="f.feature",
        scenario=criterion,
        status=status,
        duration_s=0.0,
        checks=checks if checks is not None else held_checks(criterion),
        **more,  # type: ignore[arg-type]
    )


def judged(criterion: str, *records: ScenarioResult) -> Status:
    tagged = [r for r in records if r.criterion == criterion]
    verdict = judge_criterion(
        REGISTRY.criterion(criterion), tagged, run_evidence(records), REGISTRY, naming=list(records)
    )
    return verdict.status


def test_a_criterion_passes_only_when_every_observable_clause_held() -> None:
    assert judged(FIRST, record(FIRST)) is Status.PASSED
    some = dict(list(held_checks(FIRST).items())[1:])
    assert judged(FIRST, record(FIRST, checks=some)) is Status.UNVERIFIED


def test_a_passing_record_with_no_evidence_verifies_nothing() -> None:
    """The false pass this algebra closes: a record that passed but judged no clause."""
    assert judged(FIRST, record(FIRST, checks={})) is Status.UNVERIFIED


UNREACHED = f"{FIRST}/agent-only"
MISSING_HOOK = "the implementation does not declare hook:x"


def all_but_one_clause_checked() -> tuple[ScenarioResult, ScenarioResult]:
    """A record whose checks held for every clause of FIRST but UNREACHED, and the scenario
    that names UNREACHED and did not apply, for want of a hook."""
    rest = {c: t for c, t in held_checks(FIRST).items() if c != UNREACHED}
    skipped = record(FIRST, Status.NOT_APPLICABLE, {}, clauses=[UNREACHED], evidence=MISSING_HOOK)
    return record(FIRST, checks=rest), skipped


def test_an_unexercised_clause_says_why_from_the_records_that_name_it() -> None:
    checked, skipped = all_but_one_clause_checked()
    verdict = judge_criterion(
        REGISTRY.criterion(FIRST),
        [checked, skipped],
        run_evidence([checked]),
        REGISTRY,
        naming=[skipped],
    )
    (unexercised,) = verdict.unexercised()
    assert (unexercised.clause, unexercised.state) == (UNREACHED, ClauseState.UNEXERCISED)
    assert unexercised.reason == MISSING_HOOK


def test_a_break_fails_the_criterion_of_its_clause_not_the_scenario_s_tag() -> None:
    """A scenario of 001.2 that breaks a clause of 001.1 fails 001.1; 001.2, whose clauses all
    held elsewhere, passes."""
    breaking = record(
        SECOND,
        Status.FAILED,
        {f"{FIRST}/agent-only": Tally(broken=1)},
        violated=[f"{FIRST}/agent-only"],
    )
    records = (record(FIRST), record(SECOND), breaking)
    assert judged(FIRST, *records) is Status.FAILED
    assert judged(SECOND, *records) is Status.PASSED


def test_a_failure_citing_no_clause_fails_the_criterion_it_stopped() -> None:
    assert judged(SECOND, record(SECOND), record(SECOND, Status.FAILED, {})) is Status.FAILED


def test_a_fault_of_a_record_is_its_criterion_s_verdict() -> None:
    assert judged(FIRST, record(FIRST), record(FIRST, Status.ERRORED, {})) is Status.ERRORED


def test_a_break_in_an_expected_failure_only_is_xfail() -> None:
    clause = f"{FIRST}/agent-only"
    known = record(FIRST, Status.XFAIL, {clause: Tally(broken=1)})
    records = [record(FIRST), known]
    verdict = judge_criterion(
        REGISTRY.criterion(FIRST),
        records,
        run_evidence(records),
        REGISTRY,
        expected={clause},
    )
    assert verdict.status is Status.XFAIL


def test_a_reading_broken_fails_its_criteria_and_one_explained_diverges_them() -> None:
    criterion = "AC-ARMONIA-WORKREQ-001.13"
    broken = record(criterion, checks={**held_checks(criterion), "WR-24": Tally(broken=1)})
    explained = record(
        criterion,
        checks={**held_checks(criterion), "WR-24": Tally(diverged=["WR-24=zero-usage-accepted"])},
    )
    assert judged(criterion, broken) is Status.FAILED
    assert judged(criterion, explained) is Status.DIVERGED


def test_a_divergence_lands_on_the_criteria_of_its_reading_not_the_scenario_s_tag() -> None:
    """A scenario of 001.3 that diverges only on WR-1 (registered under 001.1, 001.9 and 001.13,
    not 001.3) diverges those criteria; 001.3, whose clauses all held, passes."""
    tag, reached = "AC-ARMONIA-WORKREQ-001.3", "AC-ARMONIA-WORKREQ-001.13"
    assert tag not in REGISTRY.interpretation("WR-1").criteria
    diverging = record(
        tag,
        Status.DIVERGED,
        {**held_checks(tag), "WR-1": Tally(diverged=["WR-1=from-campaign"])},
        violated=["WR-1"],
    )
    records = (record(reached), diverging)
    assert judged(tag, *records) is Status.PASSED
    assert judged(reached, *records) is Status.DIVERGED
    unnoted = record(tag, Status.DIVERGED, held_checks(tag), violated=["WR-1"])
    assert judged(tag, unnoted) is Status.DIVERGED, "a divergence no check noted never passes"


@pytest.mark.parametrize("question", [i.id for i in default_registry().active_interpretations()])
def test_an_answer_every_alternative_forbids_fails_every_criterion_of_its_question(
    question: str,
) -> None:
    """The register walked: for each open question, a check whose answer no alternative allows
    is a break, declared or not, and fails each criterion the question is registered under."""
    interpretation = REGISTRY.interpretation(question)
    declarations = [{}, *({question: a.name} for a in interpretation.alternatives)]
    for declared in declarations:
        ledger, log = Ledger(), ReadingLog(declared=declared)
        closers = (open_ledger(ledger), open_reading_log(log))
        try:
            expect(False, question, "an answer no reading allows", allows={question: set()})
        finally:
            for close in reversed(closers):
                close()
        assert ledger.tallies[question] == Tally(broken=1), declared
        for criterion in interpretation.criteria:
            checks = {**held_checks(criterion), **ledger.snapshot()}
            assert judged(criterion, record(criterion, checks=checks)) is Status.FAILED


def part_run(*records: ScenarioResult) -> ResultsRun:
    header = a_header().model_copy(update={"shard": Shard(index=2, count=2, inventory="x")})
    return ResultsRun(
        header=header,
        scenarios=list(records),
        footer=Footer(finished_at=STARTED, totals={}, records=len(records)),
    )


def test_a_shard_part_does_not_fail_what_it_cannot_judge() -> None:
    part = part_run(record(FIRST))
    statuses = {v.criterion.id: v.status for v in criterion_verdicts(part, REGISTRY)}
    assert statuses[FIRST] is Status.PASSED
    assert statuses[SECOND] is Status.NOT_APPLICABLE
    assert run_succeeded(part, REGISTRY)
    broken = record(SECOND, Status.FAILED, {f"{SECOND}/serial-bound": Tally(broken=1)})
    assert not run_succeeded(part_run(record(FIRST), broken), REGISTRY)


def test_every_format_of_a_passing_part_says_the_part_and_passes() -> None:
    from conformance.reports.badge import render_badge
    from conformance.reports.junit import render_junit
    from conformance.reports.markdown import render_markdown

    part = part_run(record(FIRST))
    badge = render_badge(part, REGISTRY)
    assert "part 2 of 2: passed" in badge and "#2e7d32" in badge
    markdown = render_markdown(part, REGISTRY)
    assert markdown.startswith("## Conformance: fake (part 2 of 2) passed"), markdown[:200]
    assert "part 2 of 2, claims" in markdown
    assert "<failure" not in render_junit(part, REGISTRY)


def test_the_living_page_shows_each_clause_s_verdict_and_why_one_went_unexercised() -> None:
    from conformance.reports.html import render_html

    run = ResultsRun(
        header=a_header(),
        scenarios=list(all_but_one_clause_checked()),
        footer=Footer(finished_at=STARTED, totals={}, records=2),
    )
    page = render_html(run, REGISTRY)
    assert f"(unexercised: {MISSING_HOOK})" in page
    assert "(verified)" in page


def test_a_step_s_evidence_is_what_the_ledger_gained_while_it_ran() -> None:
    ledger = Ledger()
    ledger.held(["a", "b"])
    before = ledger.snapshot()
    ledger.held(["a"])
    ledger.broken(["c"])
    ledger.diverged("d", ["WR-1=from-campaign"])
    assert ledger.since(before) == {
        "a": Tally(held=1),
        "c": Tally(broken=1),
        "d": Tally(diverged=["WR-1=from-campaign"]),
    }
    assert ledger.since(ledger.snapshot()) == {}
