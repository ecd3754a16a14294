"""A side-by-side matrix of several implementations' per-criterion verdicts."""

from __future__ import annotations

from rich.table import Table

from conformance.registry import Registry
from conformance.reports.summary import criterion_verdicts
from conformance.reports.terminal import STYLE
from conformance.results import ResultsRun


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
