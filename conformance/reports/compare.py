"""A side-by-side matrix of several implementations' per-criterion verdicts."""

from __future__ import annotations

from rich.table import Table

from conformance.registry import Registry
from conformance.reports.summary import criterion_verdicts, divergences
from conformance.reports.terminal import STYLE
from conformance.results import ResultsRun, Status


def comparison_table(runs: list[ResultsRun], names: list[str], registry: Registry) -> Table:
    table = Table(title="Per-criterion verdicts, side by side", title_justify="left")
    table.add_column("criterion", no_wrap=True)
    for name in names:
        table.add_column(name, no_wrap=True)
    columns = [
        {v.criterion.id: v.status for v in criterion_verdicts(run, registry)} for run in runs
    ]
    for criterion in registry.criteria:
        cells = [f"[{STYLE[col[criterion.id]]}]{col[criterion.id].value}[/]" for col in columns]
        table.add_row(criterion.id, *cells)
    return table


def divergence_table(runs: list[ResultsRun], names: list[str], registry: Registry) -> Table:
    """Per registered interpretation, which implementations read it otherwise.

    This is the list of open questions a spec owner must settle: an interpretation
    one implementation agrees with and another diverges from.
    """
    table = Table(
        title="Interpretations: who reads each open question otherwise", title_justify="left"
    )
    table.add_column("interpretation", no_wrap=True)
    for name in names:
        table.add_column(name, no_wrap=True)
    for interpretation in registry.active_interpretations():
        table.add_row(interpretation.id, *(_reading(run, interpretation.id) for run in runs))
    return table


def _reading(run: ResultsRun, interpretation: str) -> str:
    resting = [s for s in run.scenarios if interpretation in s.interpretations]
    diverged = divergences(run).get(interpretation, [])
    if diverged:
        return f"[yellow]diverged ({len(diverged)})[/]"
    if any(s.status is Status.PASSED for s in resting):
        return "[green]agrees[/]"
    return "[dim]not exercised[/]"
