"""`conformance strength`: every mutant killed by its own criterion, every variant accepted."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from conformance.properties import Budget

if TYPE_CHECKING:
    from conformance.strength import TargetRun


import conformance.cli.common as common
from conformance.cli.common import (
    EXIT_FAILURES,
    EXIT_OK,
    EXIT_USAGE,
    Seed,
    app,
)


@app.command(short_help="judge the kit: every mutant killed, every variant passed")
def strength(
    mutant: Annotated[
        list[str] | None,
        typer.Option(help="only mutants whose name matches this glob (repeatable)"),
    ] = None,
    variant: Annotated[
        list[str] | None,
        typer.Option(help="only variants whose name matches this glob (repeatable)"),
    ] = None,
    jobs: Annotated[int, typer.Option(min=1, help="suite runs at once")] = 2,
    select: Annotated[str | None, typer.Option("-k", help="pytest -k expression")] = None,
    all_features: Annotated[
        bool, typer.Option(help="run every feature file against every mutant and variant")
    ] = False,
    thorough: Annotated[
        bool,
        typer.Option(help="run every mutant through its whole suite, for the full kills table"),
    ] = False,
    keep: Annotated[
        Path | None,
        typer.Option(file_okay=False, help="keep each run's results stream and log here"),
    ] = None,
    json_out: Annotated[
        Path | None,
        typer.Option("--json", dir_okay=False, help="write the kills and verdicts as JSON here"),
    ] = None,
    properties: Annotated[
        Budget,
        typer.Option(
            help="the property checks each run makes beside its scenarios, for the control, "
            "the mutants and the variants alike: none, ci or thorough (see docs/strength.md)"
        ),
    ] = Budget.NONE,
    seed: Seed = None,
) -> None:
    """Run the suite against every mutant (each must be killed by its own criterion) and every
    legal variant (each must pass, or diverge only where it says); 1 if either side fails."""
    from conformance import strength as kit_strength
    from conformance import strength_report

    narrowed = bool(mutant or variant)
    try:
        chosen = kit_strength.select_mutants(mutant or []) if mutant or not narrowed else []
        legal = kit_strength.select_variants(variant or []) if variant or not narrowed else []
        checks = kit_strength.Properties(properties, seed)
    except ValueError as error:
        common.console.print(f"[bold red]{escape(str(error))}[/]")
        raise typer.Exit(EXIT_USAGE) from error
    with _strength_progress(len(chosen), len(legal)) as progress:
        outcome = kit_strength.run_strength(
            chosen,
            variants=legal,
            jobs=jobs,
            select=select,
            partial=narrowed,
            all_features=all_features,
            thorough=thorough,
            keep=keep,
            progress=progress,
            properties=checks,
        )
    strength_report.print_report(outcome, common.console)
    if json_out is not None:
        strength_report.write_json(outcome, json_out)
    raise typer.Exit(EXIT_OK if outcome.succeeded() else EXIT_FAILURES)


@contextmanager
def _strength_progress(mutants: int, variants: int) -> Iterator[Callable[[TargetRun], None]]:
    """Progress over the suite runs (the control, each mutant, each variant, and any mutant its
    own criterion missed, run again whole) with the kills so far: a bar on a terminal, a line
    per finished run in a CI log."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from conformance.stream.results import Status

    counts = {"done": 0, "kills": 0, "total": 1 + mutants + variants}
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    on_terminal = common.console.is_terminal
    with Progress(
        *columns,
        TimeElapsedColumn(),
        console=common.console,
        transient=True,
        disable=not on_terminal,
    ) as bar:
        task = bar.add_task("strength", total=counts["total"])

        def finished(run: TargetRun) -> None:
            statuses = run.statuses().values() if run.results is not None else []
            killed = any(status is Status.FAILED for _, status in statuses)
            counts["kills"] += run.target.impl.startswith("mutant:") and killed
            counts["done"] += 1
            counts["total"] = max(counts["total"], counts["done"])
            line = (
                f"strength: {counts['done']}/{counts['total']} suite runs done "
                f"({run.target.label}), {counts['kills']} mutant(s) killed so far"
            )
            bar.update(task, completed=counts["done"], total=counts["total"], description=line)
            if not on_terminal:
                common.console.print(line, markup=False, highlight=False)

        yield finished
