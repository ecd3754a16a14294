"""The terminal table: verdicts grouped by requirement and criterion (rich), then what needs
attention, and last the run's own verdict, the one its exit code gives."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from conformance.reports.summary import (
    CriterionVerdict,
    claim_headline,
    criterion_verdicts,
    divergences,
    out_of_scope_line,
    readings_of,
    records_said,
    run_succeeded,
    scenarios_cell,
    unmet_criteria,
    untagged,
)
from conformance.spec.registry import Registry
from conformance.stream.results import NOT_RUN, ResultsRun, ScenarioResult, Status, attention

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
ACCOUNT_LINES: Final = 100
"""A terminal account's longest (a counterexample of a long program, a step checking the store
after each wake); the stream has it all."""


def print_verdicts(
    run: ResultsRun,
    registry: Registry,
    console: Console,
    stream: Path | None = None,
    *,
    traceback: bool = False,
) -> None:
    """The tables, what needs attention (the causes grouped, then each failure's account once)
    and the run's verdict; `stream` is where the whole evidence is kept, if anywhere; the kit's
    own frames only with `traceback`."""
    verdicts = {verdict.criterion.id: verdict for verdict in criterion_verdicts(run, registry)}
    for requirement in registry.requirements:
        claimed = [c for c in registry.criteria_of(requirement.id) if verdicts[c.id].claimed]
        if not claimed:
            continue
        table = Table(
            title=escape(f"{requirement.id}: {requirement.title}"),
            title_justify="left",
            expand=True,
        )
        table.add_column("criterion", no_wrap=True)
        table.add_column("verdict", no_wrap=True)
        table.add_column("scenarios", justify="right", no_wrap=True)
        table.add_column("statement")
        for criterion in claimed:
            verdict = verdicts[criterion.id]
            review = " [yellow](needs review)[/]" if criterion.id in run.header.needs_review else ""
            table.add_row(
                escape(criterion.id),
                f"{_verdict_cell(verdict)}{review}",
                scenarios_cell(verdict),
                escape(criterion.statement),
            )
        console.print(table)
    outside = out_of_scope_line(run, list(verdicts.values()))
    if outside:
        console.print(escape(outside), style="dim", highlight=False, soft_wrap=True)
    _print_problems(run, registry, console, stream, traceback=traceback)
    headline = claim_headline(run, list(verdicts.values()))
    if run.header.properties != "none":
        seed = run.header.seed
        console.print(
            f"property checks: budget {run.header.properties}, seed {seed} "
            f"(--seed {seed} repeats their search)",
            highlight=False,
        )
    console.print(f"{headline}; {records_said(run)}", markup=False, highlight=False, soft_wrap=True)
    passed = run_succeeded(run, registry)
    shard = run.header.shard
    what = "run" if shard is None else f"part {shard.index} of {shard.count}"
    console.print(f"[bold green]{what} passed[/]" if passed else f"[bold red]{what} failed[/]")


def _verdict_cell(verdict: CriterionVerdict) -> str:
    if not verdict.claimed:
        return f"[dim]out of scope ({verdict.status.value})[/]"
    cell = f"[{STYLE[verdict.status]}]{verdict.status.value}[/]"
    if verdict.status is Status.UNVERIFIED and verdict.missing_capabilities:
        cell += f" (needs {escape(', '.join(verdict.missing_capabilities))})"
    return cell


def _print_problems(
    run: ResultsRun, registry: Registry, console: Console, stream: Path | None, *, traceback: bool
) -> None:
    for question, reading in sorted(readings_of(run).items()):
        console.print(f"[cyan]{escape(question)}[/]: the implementation {escape(reading)}")
    for interpretation, results in sorted(divergences(run).items()):
        reading = registry.statement_of(interpretation)
        console.print(
            f"[yellow]diverged from {escape(interpretation)}[/] in {len(results)} scenario(s): "
            f"{escape(reading)}",
            highlight=False,
        )
    not_run = [result for result in run.scenarios if result.evidence == NOT_RUN]
    _print_causes(run, console)
    _print_accounts(run, console, stream, traceback=traceback)
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


def _print_causes(run: ResultsRun, console: Console) -> None:
    """What failed, grouped by cause (the clauses broken and what was seen, numbers aside),
    most frequent first, each with its count and its first scenario: one missing operation
    reads as one cause, not fifty failures."""
    groups = causes(run)
    if not groups:
        return
    failing = sum(len(members) for members in groups.values())
    console.print(
        f"[bold]{failing} record(s) did not pass, from {len(groups)} cause(s):[/]",
        highlight=False,
    )
    for (cited, said), members in sorted(groups.items(), key=lambda g: -len(g[1])):
        console.print(
            f"  {len(members)}× {escape(cited)}: {escape(said)}\n"
            f"     first: {_where_and_title(members[0])}",
            highlight=False,
            soft_wrap=True,
        )


def _where_and_title(result: ScenarioResult) -> str:
    where = f"{result.feature}:{result.line}" if result.line else result.feature
    return f"{escape(where)} {escape(result.shown_title)}"


def causes(run: ResultsRun) -> dict[tuple[str, str], list[ScenarioResult]]:
    """The records that did not pass, by cause: the clauses their check cited (or the status,
    for a fault outside any check) and its expected-against-observed line with the numbers
    left out."""
    groups: dict[tuple[str, str], list[ScenarioResult]] = {}
    for result in attention(run):
        failure = result.failure
        cited = (
            ", ".join(failure.clauses) if failure and failure.clauses else result.shown_status.value
        )
        said = failure.headline if failure else (result.evidence or "").partition("\n")[0]
        groups.setdefault((cited, re.sub(r"\d+", "N", said)), []).append(result)
    return groups


def _print_accounts(
    run: ResultsRun, console: Console, stream: Path | None, *, traceback: bool
) -> None:
    """Each record that did not pass, once: its title, then the account of its failure as a
    person reads it (step, clauses, expected vs observed, counterexample, trace). A property
    check stops at one counterexample and writes a record per criterion it names: the second
    of them refers to the first. What the terminal leaves out (Hypothesis' notes, what was
    measured) is in the results stream, and the last line says where."""
    first_of: dict[str, ScenarioResult] = {}
    shown = 0
    for result in attention(run):
        shown += 1
        console.print(
            f"[{STYLE[result.shown_status]}]{result.shown_status.value}[/] "
            f"{_where_and_title(result)}",
            highlight=False,
            soft_wrap=True,
        )
        account = terminal_account(result, traceback=traceback)
        first = first_of.setdefault(account, result)
        if first is not result and _one_check(first, result):
            console.print(f"  (the same counterexample as for {escape(first.title)}, above)")
        elif account:
            console.print(account, markup=False, highlight=False, soft_wrap=True)
    if shown:
        whole = "the whole evidence of each, with what Hypothesis noted and what was measured"
        said = f"{whole}, is in {stream}" if stream else f"--results FILE keeps {whole}"
        console.print(escape(said[0].upper() + said[1:]), highlight=False, soft_wrap=True)


def terminal_account(result: ScenarioResult, *, traceback: bool = False) -> str:
    """A record's account for the terminal: its failure without Hypothesis' notes, and without
    the kit's own frames unless `traceback`, cut to ACCOUNT_LINES; a record with no failure (an
    xpass, a skip without a reason) says its evidence."""
    text = (
        result.failure.render(hypothesis_notes=False, trace=traceback)
        if result.failure is not None
        else result.evidence or ""
    )
    lines = text.splitlines()
    if len(lines) <= ACCOUNT_LINES:
        return text
    cut = len(lines) - ACCOUNT_LINES
    return "\n".join([*lines[:ACCOUNT_LINES], f"… ({cut} more lines in the results stream)"])


def _one_check(first: ScenarioResult, result: ScenarioResult) -> bool:
    """Whether two records are of one property check's run (no steps, one feature and title:
    an outline's rows have steps and differ in title)."""
    return not result.steps and (first.feature, first.scenario) == (
        result.feature,
        result.scenario,
    )
