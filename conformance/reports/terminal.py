"""The terminal table: verdicts grouped by requirement and criterion (rich), then what needs
attention, and last the run's own verdict, the one its exit code gives."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from conformance.reports.summary import (
    CriterionVerdict,
    claim_headline,
    criterion_verdicts,
    divergences,
    readings_of,
    run_succeeded,
    unmet_criteria,
    untagged,
)
from conformance.spec.registry import Registry
from conformance.stream.results import NOT_RUN, ResultsRun, Status, totals

STYLE = {
    Status.PASSED: "green",
    Status.XFAIL: "yellow",
    Status.NOT_APPLICABLE: "cyan",
    Status.FAILED: "bold red",
    Status.ERRORED: "bold red",
    Status.TIMEOUT: "bold red",
    Status.XPASS: "bold red",
    Status.UNDEFINED: "bold magenta",
    Status.DIVERGED: "yellow",
    Status.UNVERIFIED: "bold magenta",
}


def print_verdicts(run: ResultsRun, registry: Registry, console: Console) -> None:
    verdicts = {verdict.criterion.id: verdict for verdict in criterion_verdicts(run, registry)}
    for requirement in registry.requirements:
        table = Table(
            title=escape(f"{requirement.id}: {requirement.title}"),
            title_justify="left",
            expand=True,
        )
        table.add_column("criterion", no_wrap=True)
        table.add_column("verdict", no_wrap=True)
        table.add_column("scenarios", justify="right", no_wrap=True)
        table.add_column("statement")
        for criterion in registry.criteria_of(requirement.id):
            verdict = verdicts[criterion.id]
            passed = sum(1 for s in verdict.scenarios if s.status is Status.PASSED)
            review = " [yellow](needs review)[/]" if criterion.id in run.header.needs_review else ""
            table.add_row(
                escape(criterion.id),
                f"{_verdict_cell(verdict)}{review}",
                f"{passed}/{len(verdict.scenarios)}",
                escape(criterion.statement),
            )
        console.print(table)
    _print_problems(run, registry, console)
    counted = totals(run.scenarios)
    summary = ", ".join(f"{count} {status.value}" for status, count in counted.items() if count)
    headline = claim_headline(run, list(verdicts.values()))
    if run.header.properties != "none":
        seed = run.header.seed
        console.print(
            f"property checks: budget {run.header.properties}, seed {seed} "
            f"(--seed {seed} repeats their search)",
            highlight=False,
        )
    console.print(f"{headline}; scenarios: {summary or 'none'}", markup=False, highlight=False)
    passed = run_succeeded(run, registry)
    console.print("[bold green]run passed[/]" if passed else "[bold red]run failed[/]")


def _verdict_cell(verdict: CriterionVerdict) -> str:
    if not verdict.claimed:
        return f"[dim]out of scope ({verdict.status.value})[/]"
    cell = f"[{STYLE[verdict.status]}]{verdict.status.value}[/]"
    if verdict.status is Status.UNVERIFIED and verdict.missing_capabilities:
        cell += f" (needs {escape(', '.join(verdict.missing_capabilities))})"
    return cell


def _print_problems(run: ResultsRun, registry: Registry, console: Console) -> None:
    for question, reading in sorted(readings_of(run).items()):
        console.print(f"[cyan]{escape(question)}[/]: the implementation {escape(reading)}")
    for interpretation, results in sorted(divergences(run).items()):
        reading = registry.statement_of(interpretation)
        console.print(
            f"[yellow]diverged from {escape(interpretation)}[/] in {len(results)} scenario(s): "
            f"{escape(reading)}",
            highlight=False,
        )
    quiet = (Status.PASSED, Status.NOT_APPLICABLE, Status.XFAIL, Status.DIVERGED)
    not_run = [result for result in run.scenarios if result.evidence == NOT_RUN]
    shown: set[str] = set()
    for result in run.scenarios:
        if result.status in quiet or result.evidence == NOT_RUN:
            continue
        console.print(f"[{STYLE[result.status]}]{result.status.value}[/] {escape(result.key)}")
        if result.evidence in shown:
            console.print("  (the same evidence as above: one property check, several criteria)")
        elif result.evidence:
            shown.add(result.evidence)
            console.print(result.evidence, markup=False, highlight=False)
    if not_run:
        console.print(
            f"[{STYLE[Status.UNDEFINED]}]{len(not_run)} scenario(s) did not run[/] "
            "(deselected, or never reached after a stop); the results stream lists them"
        )
    for result in untagged(run, registry):
        console.print(f"[bold magenta]untagged[/] {escape(result.key)}: names no known criterion")
    for unmet in unmet_criteria(run, registry):
        label, _, rest = unmet.reason.partition(":")
        console.print(f"[bold magenta]{escape(label)}:[/]{escape(rest)}", highlight=False)
