"""Several implementations side by side: criteria as rows, implementations as columns.

Each column is named after the implementation its run tested (the name and version it gave in
its handshake, else its command), and judged by its own run's claim: a criterion outside it is
"out of scope", counts in neither the column's total nor a disagreement, exactly as that run's
own report says. The terminal table uses short criterion IDs so that it stays readable at 80
columns; Markdown and HTML carry the full IDs, a count per column, the rows where
implementations disagree marked, and (in HTML) each criterion expandable to its scenarios with
their verdicts per implementation, as wpt.fyi shows. Every format ends with the open questions:
per registered interpretation, which implementations read it otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Final

from rich.markup import escape as escape_markup
from rich.table import Table

from conformance.reports.summary import criterion_verdicts, divergences, readings_of
from conformance.reports.terminal import STYLE
from conformance.spec.registry import Registry, short_id
from conformance.stream.results import FAILING, ResultsRun, Status

OUT_OF_SCOPE: Final = "out of scope"
_READING_STYLE: Final = {"declares": "cyan", "diverged": "yellow", "agrees": "green"}
_OUTSIDE_CLAIM: Final = f"<td class='out_of_scope'>{OUT_OF_SCOPE}</td>"
_NO_SCENARIO: Final = "<td>—</td>"


@dataclass(frozen=True)
class Matrix:
    """Per criterion (registry order), each implementation's verdict (None: outside its run's
    claim), and per criterion its scenarios' statuses."""

    names: list[str]
    rows: list[tuple[str, list[Status | None]]]
    scenarios: dict[str, list[tuple[str, list[Status | None]]]]

    def passed(self, column: int) -> int:
        return sum(1 for _, statuses in self.rows if statuses[column] is Status.PASSED)

    def claimed(self, column: int) -> int:
        return sum(1 for _, statuses in self.rows if statuses[column] is not None)

    def out_of_scope(self, column: int) -> int:
        return len(self.rows) - self.claimed(column)

    def heading(self, column: int) -> str:
        """`15/25 passed`, and how many were outside the run's claim."""
        counted = f"{self.passed(column)}/{self.claimed(column)} passed"
        outside = self.out_of_scope(column)
        return f"{counted}, {outside} {OUT_OF_SCOPE}" if outside else counted

    @staticmethod
    def differs(statuses: Sequence[Status | None]) -> bool:
        """Whether the implementations that claim a criterion disagree on it."""
        return len({status for status in statuses if status is not None}) > 1


def column_names(runs: list[ResultsRun], fallbacks: list[str]) -> list[str]:
    """Each run's implementation as it named itself, else its command; a name two runs share
    gets the run beside it (when it started, its seed, the kit's commit), and its file's name
    (`fallbacks`) where even those agree."""
    names = [implementation_name(run) for run in runs]
    runs_named = [
        f"{name} ({run_label(run)})" if names.count(name) > 1 else name
        for name, run in zip(names, runs, strict=True)
    ]
    return [
        f"{name} [{fallback}]" if runs_named.count(name) > 1 else name
        for name, fallback in zip(runs_named, fallbacks, strict=True)
    ]


def implementation_name(run: ResultsRun) -> str:
    description = run.header.description or {}
    name, version = description.get("name"), description.get("version")
    said = f"{name} {version}" if name and version else str(name or "")
    return said or run.header.implementation


def run_label(run: ResultsRun) -> str:
    """A run told apart from another of the same implementation: when, which search, which kit."""
    header = run.header
    parts = [header.started_at.strftime("%Y-%m-%d %H:%M")]
    parts += [f"seed {header.seed}"] if header.seed is not None else []
    commit = header.provenance.kit_commit if header.provenance else None
    parts += [f"kit {commit[:7]}"] if commit else []
    return ", ".join(parts)


@dataclass(frozen=True)
class Change:
    criterion: str
    before: Status | None
    after: Status | None


@dataclass(frozen=True)
class Diff:
    """Two runs, before and after: what newly fails, what was fixed, what else moved."""

    before: str
    after: str
    newly_failing: list[Change]
    fixed: list[Change]
    changed: list[Change]

    def sections(self) -> list[tuple[str, list[Change]]]:
        return [
            ("Newly failing", self.newly_failing),
            ("Fixed", self.fixed),
            ("Changed verdict", self.changed),
        ]


FAILING_VERDICTS: Final = FAILING | {Status.UNVERIFIED}
"""A criterion's verdicts that fail a run (its records' failing statuses, and unverified)."""


def diff(found: Matrix) -> Diff | None:
    """With two runs, each criterion whose verdict moved, sorted into newly failing (it fails
    now and did not), fixed (it passes now and failed) and the rest; None for more runs."""
    if len(found.names) != 2:
        return None
    moved = [
        Change(criterion, before, after)
        for criterion, (before, after) in found.rows
        if before != after
    ]
    newly = [c for c in moved if c.after in FAILING_VERDICTS and c.before not in FAILING_VERDICTS]
    fixed = [c for c in moved if c.before in FAILING_VERDICTS and c.after is Status.PASSED]
    rest = [c for c in moved if c not in newly and c not in fixed]
    return Diff(found.names[0], found.names[1], newly, fixed, rest)


def _said(status: Status | None) -> str:
    return status.value if status is not None else OUT_OF_SCOPE


def diff_lines(found: Matrix) -> list[str]:
    """The diff as plain lines, for the terminal and Markdown alike (empty for more runs)."""
    changes = diff(found)
    if changes is None:
        return []
    lines = [f"From {changes.before} to {changes.after}:"]
    for title, listed in changes.sections():
        lines.append(f"{title}: {len(listed) or 'none'}")
        lines += [f"  {c.criterion}: {_said(c.before)} -> {_said(c.after)}" for c in listed]
    return lines


def matrix(runs: list[ResultsRun], names: list[str], registry: Registry) -> Matrix:
    columns = [{v.criterion.id: v for v in criterion_verdicts(run, registry)} for run in runs]
    rows = [
        (c.id, [column[c.id].status if column[c.id].claimed else None for column in columns])
        for c in registry.criteria
    ]
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
        table.add_column(f"{escape_markup(name)}\n{found.heading(index)}")
    for criterion, statuses in found.rows:
        marker = "[bold]≠[/] " if Matrix.differs(statuses) else "  "
        cells = [
            f"[{STYLE[status]}]{status.value}[/]" if status else f"[dim]{OUT_OF_SCOPE}[/]"
            for status in statuses
        ]
        table.add_row(marker + escape_markup(short_id(criterion)), *cells)
    return table


def render_compare_markdown(runs: list[ResultsRun], names: list[str], registry: Registry) -> str:
    found = matrix(runs, names, registry)
    lines = ["## Conformance, side by side", "", *_markdown_diff(found)]
    lines += [
        "| criterion | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
        "| **criteria passed** | "
        + " | ".join(f"**{found.heading(i)}**" for i in range(len(names)))
        + " |",
    ]
    for criterion, statuses in found.rows:
        mark = " ≠" if Matrix.differs(statuses) else ""
        cells = [_markdown_cell(status, bold=bool(mark)) for status in statuses]
        lines.append(f"| {criterion}{mark} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "≠ marks a criterion on which the implementations that claim it disagree; "
        f"{OUT_OF_SCOPE}: outside that run's claim (`--claim`).",
        "",
        "### Open questions: who reads each otherwise",
        "",
        "| interpretation | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for interpretation, readings in interpretation_rows(runs, registry):
        lines.append(f"| {interpretation} | " + " | ".join(text for _, text in readings) + " |")
    return "\n".join(lines) + "\n"


def _markdown_diff(found: Matrix) -> list[str]:
    changes = diff(found)
    if changes is None:
        return []
    lines = [f"From **{changes.before}** to **{changes.after}**:", ""]
    for title, listed in changes.sections():
        lines += [f"### {title}: {len(listed) or 'none'}", ""]
        lines += [f"- {c.criterion}: {_said(c.before)} → {_said(c.after)}" for c in listed]
        lines += [""] if listed else []
    return lines


def _markdown_cell(status: Status | None, *, bold: bool) -> str:
    if status is None:
        return OUT_OF_SCOPE
    return f"**{status.value}**" if bold else status.value


_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}table{border-collapse:collapse}
td,th{border:1px solid #ddd;padding:.2rem .5rem;font-size:.9rem;text-align:left}
tr.differs>td:first-child{border-left:4px solid #ef6c00}tr.scenario td{font-size:.8rem}
.passed,.agrees{background:#c8e6c9}.failed,.errored,.timeout,.xpass{background:#ffcdd2}
.not_applicable,.xfail{background:#fff9c4}.undefined,.unverified{background:#e1bee7}
.diverged{background:#ffe0b2}.declares{background:#b2ebf2}.out_of_scope{color:#888}
details summary{cursor:pointer}
"""


def render_compare_html(runs: list[ResultsRun], names: list[str], registry: Registry) -> str:
    found = matrix(runs, names, registry)
    head = "".join(
        f"<th>{escape(name)}<br>{escape(found.heading(i))}</th>" for i, name in enumerate(names)
    )
    body = []
    for criterion, statuses in found.rows:
        differs = " class='differs'" if Matrix.differs(statuses) else ""
        scenario_rows = "".join(
            f"<tr class='scenario'><td>{escape(key)}</td>{_cells(each, absent=_NO_SCENARIO)}</tr>"
            for key, each in found.scenarios[criterion]
        )
        body.append(
            f"<tr{differs}><td><details><summary>{escape(criterion)}</summary>"
            f"<table>{scenario_rows}</table></details></td>"
            f"{_cells(statuses, absent=_OUTSIDE_CLAIM)}</tr>"
        )
    questions = "".join(
        f"<tr><td>{escape(interpretation)}</td>"
        + "".join(f"<td class='{kind}'>{escape(text)}</td>" for kind, text in readings)
        + "</tr>"
        for interpretation, readings in interpretation_rows(runs, registry)
    )
    names_row = "".join(f"<th>{escape(name)}</th>" for name in names)
    moved = _html_diff(found)
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>Conformance, side by side</title><style>{_CSS}</style></head><body>"
        "<h1>Conformance, side by side</h1><p>Rows marked on the left: the implementations "
        f"that claim the criterion disagree; {OUT_OF_SCOPE}: outside that run's claim. Open a "
        f"criterion for its scenarios.</p>{moved}"
        f"<table><tr><th>criterion</th>{head}</tr>{''.join(body)}</table>"
        "<h2>Open questions: who reads each otherwise</h2>"
        f"<table><tr><th>interpretation</th>{names_row}</tr>{questions}</table></body></html>\n"
    )


def _html_diff(found: Matrix) -> str:
    changes = diff(found)
    if changes is None:
        return ""
    sections = "".join(
        f"<h2>{title}: {len(listed) or 'none'}</h2>"
        + ("<ul>" + "".join(map(_html_change, listed)) + "</ul>" if listed else "")
        for title, listed in changes.sections()
    )
    return (
        f"<p>From <b>{escape(changes.before)}</b> to <b>{escape(changes.after)}</b>:</p>{sections}"
    )


def _html_change(change: Change) -> str:
    before, after = _said(change.before), _said(change.after)
    return (
        f"<li>{escape(change.criterion)}: <span class='{before}'>{before}</span> → "
        f"<span class='{after}'>{after}</span></li>"
    )


def _cells(statuses: Sequence[Status | None], *, absent: str) -> str:
    """A cell per status; `absent` is the cell of none (a criterion outside the claim, a
    scenario a run does not have)."""
    return "".join(
        f"<td class='{status.value}'>{status.value}</td>" if status else absent
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
    for interpretation, readings in interpretation_rows(runs, registry):
        cells = [
            f"[{_READING_STYLE.get(kind, 'dim')}]{escape_markup(text)}[/]"
            for kind, text in readings
        ]
        table.add_row(escape_markup(interpretation), *cells)
    return table


def interpretation_rows(
    runs: list[ResultsRun], registry: Registry
) -> list[tuple[str, list[tuple[str, str]]]]:
    """Per active interpretation, each run's stance as (kind, text): it declares a reading,
    diverged, agrees, or the question was not exercised."""
    return [
        (interpretation.id, [_reading(run, interpretation.id) for run in runs])
        for interpretation in registry.active_interpretations()
    ]


def _reading(run: ResultsRun, interpretation: str) -> tuple[str, str]:
    resting = [s for s in run.scenarios if interpretation in s.interpretations]
    diverged = divergences(run).get(interpretation, [])
    reading = readings_of(run).get(interpretation)
    if reading is not None and not diverged:
        return "declares", reading
    if diverged:
        named = f", {reading}" if reading else ""
        return "diverged", f"diverged ({len(diverged)}{named})"
    if any(s.status is Status.PASSED for s in resting):
        return "agrees", "agrees"
    return "not_exercised", "not exercised"
