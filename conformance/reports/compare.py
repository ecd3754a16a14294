"""Several implementations side by side: criteria as rows, implementations as columns.

The terminal table uses short criterion IDs so that it stays readable at 80
columns; Markdown and HTML carry the full IDs, a count per column, the rows
where implementations disagree marked, and (in HTML) each criterion expandable
to its scenarios with their verdicts per implementation, as wpt.fyi shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from rich.markup import escape as escape_markup
from rich.table import Table

from conformance.reports.summary import criterion_verdicts, divergences, readings_of
from conformance.reports.terminal import STYLE
from conformance.spec.registry import Registry, short_id
from conformance.stream.results import ResultsRun, Status


@dataclass(frozen=True)
class Matrix:
    """Per criterion (registry order), each implementation's verdict and scenario statuses."""

    names: list[str]
    rows: list[tuple[str, list[Status]]]
    scenarios: dict[str, list[tuple[str, list[Status | None]]]]

    def passed(self, column: int) -> int:
        return sum(1 for _, statuses in self.rows if statuses[column] is Status.PASSED)

    @staticmethod
    def differs(statuses: Sequence[Status | None]) -> bool:
        return len(set(statuses)) > 1


def matrix(runs: list[ResultsRun], names: list[str], registry: Registry) -> Matrix:
    columns = [{v.criterion.id: v for v in criterion_verdicts(run, registry)} for run in runs]
    rows = [(c.id, [column[c.id].status for column in columns]) for c in registry.criteria]
    scenarios: dict[str, list[tuple[str, list[Status | None]]]] = {}
    for criterion in registry.criteria:
        keys = list(dict.fromkeys(s.key for col in columns for s in col[criterion.id].scenarios))
        statuses = [{s.key: s.status for s in col[criterion.id].scenarios} for col in columns]
        scenarios[criterion.id] = [(key, [each.get(key) for each in statuses]) for key in keys]
    return Matrix(names, rows, scenarios)


def comparison_table(runs: list[ResultsRun], names: list[str], registry: Registry) -> Table:
    found = matrix(runs, names, registry)
    table = Table(title="Per-criterion verdicts, side by side", title_justify="left")
    table.add_column("criterion", no_wrap=True)
    for index, name in enumerate(names):
        table.add_column(f"{escape_markup(name)}\n{found.passed(index)}/{len(found.rows)} passed")
    for criterion, statuses in found.rows:
        marker = "[bold]≠[/] " if Matrix.differs(statuses) else "  "
        cells = [f"[{STYLE[status]}]{status.value}[/]" for status in statuses]
        table.add_row(marker + escape_markup(short_id(criterion)), *cells)
    return table


def render_compare_markdown(runs: list[ResultsRun], names: list[str], registry: Registry) -> str:
    found = matrix(runs, names, registry)
    lines = [
        "## Conformance, side by side",
        "",
        "| criterion | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
        "| **criteria passed** | "
        + " | ".join(f"**{found.passed(i)}/{len(found.rows)}**" for i in range(len(names)))
        + " |",
    ]
    for criterion, statuses in found.rows:
        mark = " ≠" if Matrix.differs(statuses) else ""
        cells = [f"**{s.value}**" if mark else s.value for s in statuses]
        lines.append(f"| {criterion}{mark} | " + " | ".join(cells) + " |")
    lines += ["", "≠ marks a criterion on which the implementations disagree."]
    return "\n".join(lines) + "\n"


_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}table{border-collapse:collapse}
td,th{border:1px solid #ddd;padding:.2rem .5rem;font-size:.9rem;text-align:left}
tr.differs>td:first-child{border-left:4px solid #ef6c00}tr.scenario td{font-size:.8rem}
.passed{background:#c8e6c9}.failed,.errored,.timeout,.xpass{background:#ffcdd2}
.not_applicable,.xfail{background:#fff9c4}.undefined,.unverified{background:#e1bee7}
.diverged{background:#ffe0b2}details summary{cursor:pointer}
"""


def render_compare_html(runs: list[ResultsRun], names: list[str], registry: Registry) -> str:
    found = matrix(runs, names, registry)
    head = "".join(
        f"<th>{escape(name)}<br>{found.passed(i)}/{len(found.rows)} passed</th>"
        for i, name in enumerate(names)
    )
    body = []
    for criterion, statuses in found.rows:
        differs = " class='differs'" if Matrix.differs(statuses) else ""
        scenario_rows = "".join(
            f"<tr class='scenario'><td>{escape(key)}</td>{_cells(each)}</tr>"
            for key, each in found.scenarios[criterion]
        )
        body.append(
            f"<tr{differs}><td><details><summary>{escape(criterion)}</summary>"
            f"<table>{scenario_rows}</table></details></td>{_cells(statuses)}</tr>"
        )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>Conformance, side by side</title><style>{_CSS}</style></head><body>"
        "<h1>Conformance, side by side</h1><p>Rows marked on the left: the implementations "
        "disagree. Open a criterion for its scenarios.</p>"
        f"<table><tr><th>criterion</th>{head}</tr>{''.join(body)}</table></body></html>\n"
    )


def _cells(statuses: Sequence[Status | None]) -> str:
    return "".join(
        f"<td class='{status.value}'>{status.value}</td>" if status else "<td>—</td>"
        for status in statuses
    )


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
        table.add_column(escape_markup(name))
    for interpretation in registry.active_interpretations():
        table.add_row(
            escape_markup(interpretation.id), *(_reading(run, interpretation.id) for run in runs)
        )
    return table


def _reading(run: ResultsRun, interpretation: str) -> str:
    resting = [s for s in run.scenarios if interpretation in s.interpretations]
    diverged = divergences(run).get(interpretation, [])
    reading = readings_of(run).get(interpretation)
    if reading is not None and not diverged:
        return f"[cyan]{escape_markup(reading)}[/]"
    if diverged:
        named = f", {escape_markup(reading)}" if reading else ""
        return f"[yellow]diverged ({len(diverged)}{named})[/]"
    if any(s.status is Status.PASSED for s in resting):
        return "[green]agrees[/]"
    return "[dim]not exercised[/]"
