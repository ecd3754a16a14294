"""`compare` judges each column by its own run's claim, names it after its implementation, and
puts the open questions in every format.

An office-only run used to show as 15/38 with its 13 work-request rows "unverified" and marked
as disagreements, where its own report said 15 of 25 and 13 out of scope; columns were file
stems; only the terminal had the per-interpretation table.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from conformance.reports.compare import (
    OUT_OF_SCOPE,
    column_names,
    comparison_table,
    diff_lines,
    matrix,
    render_compare_html,
    render_compare_markdown,
)
from conformance.spec.registry import default_registry
from conformance.stream.results import Claim, ResultsRun, ScenarioResult, Status
from tests.runs import a_header, held_checks

REGISTRY = default_registry()
OFFICE = [c.id for c in REGISTRY.criteria if "OFFICE" in c.id]
WORK_REQUESTS = [c.id for c in REGISTRY.criteria if "WORKREQ" in c.id]


def a_run(name: str, claim: list[str], *, failing: str | None = None) -> ResultsRun:
    """A run whose every criterion has one scenario, passed (unverified where not claimed:
    its scenarios did not apply), and `failing` failed."""
    header = a_header().model_copy(
        update={
            "implementation": f"exec:./{name}-adapter --serve",
            "description": {"name": name, "version": "1.2"},
            "claim": Claim(specs=claim),
        }
    )
    scenarios = []
    for criterion in REGISTRY.criteria:
        claimed = header.claim.covers(criterion.id)
        status = Status.PASSED if claimed else Status.NOT_APPLICABLE
        status = Status.FAILED if criterion.id == failing else status
        scenarios.append(
            ScenarioResult(
                key=f"x.feature::{criterion.id}",
                criterion=criterion.id,
                feature="x.feature",
                scenario=criterion.id,
                status=status,
                duration_s=0.0,
                checks=held_checks(criterion.id) if status is Status.PASSED else {},
            )
        )
    return ResultsRun(header=header, scenarios=scenarios, footer=None)


def runs() -> list[ResultsRun]:
    office_only = a_run("office-only", ["office"], failing=OFFICE[1])
    both = a_run("both", ["office", "work-requests"])
    return [office_only, both]


def test_a_column_counts_only_what_its_run_claims() -> None:
    found = matrix(runs(), ["a", "b"], REGISTRY)
    assert found.heading(0) == f"{len(OFFICE) - 1}/{len(OFFICE)} passed, 13 {OUT_OF_SCOPE}"
    assert found.heading(1) == f"{len(REGISTRY.criteria)}/{len(REGISTRY.criteria)} passed"
    rows = dict(found.rows)
    assert all(rows[c][0] is None for c in WORK_REQUESTS), "out of scope, not unverified"
    differing = [criterion for criterion, statuses in found.rows if found.differs(statuses)]
    assert differing == [OFFICE[1]], "out of scope is no disagreement"


def test_columns_are_named_after_the_implementations() -> None:
    assert column_names(runs(), ["results", "twin"]) == ["office-only 1.2", "both 1.2"]
    twice = [runs()[0], runs()[0]]
    label = "2026-01-01 00:00"
    assert column_names(twice, ["monday", "tuesday"]) == [
        f"office-only 1.2 ({label}) [monday]",
        f"office-only 1.2 ({label}) [tuesday]",
    ], "a run told apart by neither time, seed nor kit gets its file's name"
    seeded = [started(runs()[0], seed=1), started(runs()[0], seed=2)]
    assert column_names(seeded, ["monday", "tuesday"]) == [
        f"office-only 1.2 ({label}, seed 1)",
        f"office-only 1.2 ({label}, seed 2)",
    ]
    nameless = runs()[0].model_copy(
        update={"header": runs()[0].header.model_copy(update={"description": None})}
    )
    assert column_names([nameless], ["f"]) == ["exec:./office-only-adapter --serve"]


def started(run: ResultsRun, *, seed: int) -> ResultsRun:
    return run.model_copy(update={"header": run.header.model_copy(update={"seed": seed})})


def test_two_runs_of_one_implementation_read_as_a_diff() -> None:
    """Before and after: what newly fails, what was fixed, what else moved, then the matrix."""
    first, second = OFFICE[0], OFFICE[1]
    before = started(a_run("impl", ["office"], failing=first), seed=1)
    after = started(a_run("impl", ["office"], failing=second), seed=2)
    names = column_names([before, after], ["a", "b"])
    found = matrix([before, after], names, REGISTRY)
    said = "\n".join(diff_lines(found))
    assert f"Newly failing: 1\n  {second}: passed -> failed" in said
    assert f"Fixed: 1\n  {first}: failed -> passed" in said
    assert "Changed verdict: none" in said
    markdown = render_compare_markdown([before, after], names, REGISTRY)
    assert markdown.index("### Newly failing: 1") < markdown.index("| criterion |")
    assert "<h2>Fixed: 1</h2>" in render_compare_html([before, after], names, REGISTRY)
    three = [before, after, after]
    assert diff_lines(matrix(three, column_names(three, ["a", "b", "c"]), REGISTRY)) == []


def test_every_format_shows_the_claim_and_the_open_questions(tmp_path: Path) -> None:
    both = runs()
    names = column_names(both, ["a", "b"])
    markdown = render_compare_markdown(both, names, REGISTRY)
    html = render_compare_html(both, names, REGISTRY)
    terminal = Console(record=True, width=200)
    terminal.print(comparison_table(both, names, REGISTRY))
    for said in (markdown, html, terminal.export_text()):
        assert "office-only 1.2" in said and f"13 {OUT_OF_SCOPE}" in said
        assert said.count(OUT_OF_SCOPE) >= len(WORK_REQUESTS)
    assert "unverified" not in markdown and "unverified" not in terminal.export_text()
    assert ">unverified<" not in html
    interpretations = [i.id for i in REGISTRY.active_interpretations()]
    for said in (markdown, html):
        assert "Open questions: who reads each otherwise" in said
        assert all(f">{i}<" in said or f"| {i} |" in said for i in interpretations)
