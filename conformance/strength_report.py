"""`conformance strength`'s report: the kills per criterion, each mutant's and each variant's
verdict, what could not be judged, one summary line, and the same as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from conformance.spec.registry import short_id
from conformance.strength import StrengthReport


def print_report(report: StrengthReport, console: Console) -> None:
    if report.verdicts:
        console.print(_criteria_table(report))
        console.print(_mutants_table(report))
    if report.variants:
        console.print(_variants_table(report))
    for failure in report.control_failures():
        console.print(f"[bold red]the reference itself did not pass:[/] {escape(failure)}")
    for verdict in report.errors():
        console.print(
            f"[bold red]mutant {verdict.mutant.name} could not be judged:[/] "
            f"{escape(verdict.error or '')}"
        )
    for name in report.crashed():
        console.print(
            f"[bold red]mutant {name} was killed only by errors: is the mutant broken?[/]"
        )
    for rejected in report.rejected_variants():
        reasons = rejected.error or "; ".join(rejected.false_failures)
        console.print(
            f"[bold red]variant {rejected.variant.name} was failed by the kit "
            f"(a false failure):[/] {escape(reasons)}",
            highlight=False,
        )
    console.print(summary_line(report))


def summary_line(report: StrengthReport) -> str:
    survivors = report.survivors()
    judged = [v for v in report.verdicts if v.error is None]
    killed = [v for v in judged if not v.survived]
    missed = [v.mutant.name for v in killed if not v.intended_kill]
    accepted = [v for v in report.variants if v.accepted]
    diverging = [v for v in accepted if v.diverged_on]
    return (
        f"{len(report.verdicts)} mutants: {len(killed)} killed, {len(survivors)} survived"
        f"{' (' + ', '.join(survivors) + ')' if survivors else ''}, "
        f"{len(report.errors())} not judged; "
        f"killed by their own criterion: {len(killed) - len(missed)} of {len(killed)}"
        f"{' (not: ' + ', '.join(missed) + ')' if missed else ''}. "
        f"{len(report.variants)} variants: {len(accepted)} accepted "
        f"({len(diverging)} diverging only on the interpretations they name), "
        f"{len(report.variants) - len(accepted)} falsely failed. "
        f"Wall time {report.wall_seconds:.0f} s, {report.jobs} at a time; "
        f"{report.properties.describe()}"
    )


def _criteria_table(report: StrengthReport) -> Table:
    scope = "" if report.thorough else " (each mutant's own criterion first; see --thorough)"
    table = Table(title=f"Mutants killed, per criterion{scope}", title_justify="left")
    for column in ("criterion", "kills", "mutants killed"):
        table.add_column(column, no_wrap=column != "mutants killed")
    none = "none in this selection" if report.partial else "[bold yellow]none: weakly tested[/]"
    for criterion, names in report.kills_by_criterion().items():
        table.add_row(criterion, str(len(names)), ", ".join(names) or none)
    return table


def _mutants_table(report: StrengthReport) -> Table:
    table = Table(title="Verdict per mutant", title_justify="left")
    for column in ("mutant", "targets", "own kill", "killed by", "failed by its clauses", "s"):
        table.add_column(column, no_wrap=column not in ("killed by", "failed by its clauses"))
    for verdict in report.verdicts:
        if verdict.error is not None:
            outcome = "[bold red]error[/]"
        elif verdict.survived:
            outcome = "[bold red]SURVIVED[/]"
        elif verdict.killed_only_by_errors:
            outcome = "[bold red]errors only[/]"
        else:
            outcome = "yes" if verdict.intended_kill else "[yellow]no[/]"
        table.add_row(
            verdict.mutant.name,
            short_id(verdict.mutant.criterion),
            outcome,
            ", ".join(short_id(c) for c in sorted(verdict.killed_by, key=_criterion_order)),
            ", ".join(short_id(c) for c in sorted(verdict.blamed, key=_criterion_order)),
            f"{verdict.seconds:.0f}",
        )
    return table


def _variants_table(report: StrengthReport) -> Table:
    table = Table(title="Verdict per legal variant", title_justify="left")
    for column in ("variant", "freedom it takes", "verdict", "s"):
        table.add_column(column, no_wrap=column in ("variant", "s"))
    for verdict in report.variants:
        if verdict.error is not None:
            outcome = f"[bold red]error: {escape(verdict.error)}[/]"
        elif verdict.false_failures:
            outcome = f"[bold red]FAILED by the kit ({len(verdict.false_failures)})[/]"
        elif verdict.diverged_on:
            outcome = f"[yellow]diverged on {', '.join(sorted(verdict.diverged_on))}[/]"
        else:
            outcome = "[green]passed[/]"
        table.add_row(
            verdict.variant.name, verdict.variant.description, outcome, f"{verdict.seconds:.0f}"
        )
    return table


def _criterion_order(criterion: str) -> tuple[str, int, int]:
    prefix, _, number = criterion.rpartition("-")
    major, _, minor = number.partition(".")
    return prefix, int(major), int(minor)


def report_json(report: StrengthReport) -> dict[str, Any]:
    return {
        "wall_seconds": round(report.wall_seconds, 1),
        "jobs": report.jobs,
        "thorough": report.thorough,
        "properties": report.properties.budget.value,
        "seed": report.properties.seed,
        "control": {"seconds": report.control.seconds, "failures": report.control_failures()},
        "survivors": report.survivors(),
        "criteria": report.kills_by_criterion(),
        "mutants": [
            {
                "name": v.mutant.name,
                "criterion": v.mutant.criterion,
                "description": v.mutant.description,
                "killed_by": sorted(v.killed_by, key=_criterion_order),
                "failed_by": sorted(v.failed_by, key=_criterion_order),
                "blamed": sorted(v.blamed, key=_criterion_order),
                "intended_kill": v.intended_kill,
                "whole_suite_ran": v.complete,
                "error": v.error,
                "seconds": v.seconds,
            }
            for v in report.verdicts
        ],
        "variants": [
            {
                "name": v.variant.name,
                "description": v.variant.description,
                "declared_divergences": sorted(v.variant.diverges),
                "diverged_on": sorted(v.diverged_on),
                "false_failures": list(v.false_failures),
                "accepted": v.accepted,
                "error": v.error,
                "seconds": v.seconds,
            }
            for v in report.variants
        ],
    }


def write_json(report: StrengthReport, path: Path) -> None:
    path.write_text(json.dumps(report_json(report), indent=2) + "\n", encoding="utf-8")
