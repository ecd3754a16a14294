"""Outline rows keep their identity in every report, and a run's counts say what they count.

An outline row's failure was listed as `...: <case>[a slice of 0-0-bob-...]`; one run reported
four different counts with nothing saying why; a criterion's `1/3` read as a partial pass when
it meant 1 passed and 2 not applicable.
"""

from __future__ import annotations

from rich.console import Console

from conformance.properties.catalogue import RECORD_PREFIX
from conformance.reports.html import render_html
from conformance.reports.markdown import render_markdown
from conformance.reports.summary import criterion_verdicts, records_said, scenarios_cell
from conformance.reports.terminal import print_verdicts
from conformance.spec.registry import default_registry
from conformance.stream.results import NOT_RUN, Claim, ResultsRun, ScenarioResult, Status
from tests.runs import a_header

REGISTRY = default_registry()
CRITERION = REGISTRY.criteria[0].id
ROW_KEY = "office_assign_rate_001.feature::Out-of-scope wakes: <case>[no actor type-{}]"
ROW_TITLE = "Out-of-scope wakes: no actor type"


def record(key: str, status: Status, **more: object) -> ScenarioResult:
    fields: dict[str, object] = {
        "key": key, "criterion": CRITERION, "feature": "office_assign_rate_001.feature",
        "scenario": "Out-of-scope wakes: <case>", "status": status, "duration_s": 0.1,
    }  # fmt: skip
    return ScenarioResult.model_validate(fields | more)


def a_run() -> ResultsRun:
    scenarios = [
        record(ROW_KEY, Status.FAILED, title=ROW_TITLE, evidence="expected 'queued'"),
        record("a::passed", Status.PASSED, title="passed"),
        record("a::n/a 1", Status.NOT_APPLICABLE, title="n/a 1"),
        record("a::n/a 2", Status.NOT_APPLICABLE, title="n/a 2"),
        record("a::not run", Status.UNDEFINED, title="not run", evidence=NOT_RUN),
        record(
            f"{RECORD_PREFIX}test_office_window.py::a check[{CRITERION}]",
            Status.PASSED,
            feature=f"{RECORD_PREFIX}test_office_window.py",
            title=f"a check [{CRITERION}]",
        ),
    ]
    header = a_header().model_copy(update={"claim": Claim(specs=["office"])})
    return ResultsRun(header=header, scenarios=scenarios, footer=None)


def test_a_criterion_s_cell_says_passed_of_ran_then_the_rest() -> None:
    verdict = next(v for v in criterion_verdicts(a_run(), REGISTRY) if v.criterion.id == CRITERION)
    assert scenarios_cell(verdict) == "2/3 passed, 2 n/a, 1 not run"


def test_the_count_says_what_its_records_are() -> None:
    said = records_said(a_run())
    assert said.startswith("6 records, 5 scenarios and outline rows, 1 property-check records")
    assert "2 passed" in said and "1 failed" in said and "2 not_applicable" in said


def test_an_outline_row_is_named_by_its_values_in_every_report() -> None:
    run = a_run()
    terminal = Console(record=True, width=300)
    print_verdicts(run, REGISTRY, terminal)
    for said in (
        terminal.export_text(),
        render_markdown(run, REGISTRY),
        render_html(run, REGISTRY),
    ):
        assert ROW_TITLE in said
        assert "<case>[" not in said and "&lt;case&gt;[" not in said
        assert records_said(run) in said.replace("&#x27;", "'")
