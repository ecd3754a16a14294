"""Rich tables of a bench report, and of two reports side by side."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from bench.report import Measure, Report, Row

VERDICT_STYLE = {"met": "green", "missed": "bold red"}


def value_text(measure: Measure | None) -> str:
    if measure is None:
        return ""
    if measure.value is None:
        return f"{measure.label}: -"
    return f"{measure.label}: {number_text(measure.value)} {measure.unit}"


def number_text(value: float) -> str:
    if value.is_integer() or abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def ratio_text(ratio: float | None) -> str:
    return "" if ratio is None else f"{ratio:.2f}×"


def target_text(row: Row) -> str:
    return "" if row.target is None else f"≤ {row.target:g}×"


def print_report(report: Report, console: Console) -> None:
    table = Table(title=_title(report), show_lines=True, expand=True)
    for column, ratio in (("measure", 4), ("baseline", 2), ("subject", 2)):
        table.add_column(column, ratio=ratio)
    table.add_column("cost ×", justify="right", no_wrap=True)
    table.add_column("target", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    section = ""
    for row in report.rows:
        if row.section != section:
            section = row.section
            table.add_row(f"[bold]{section}[/]", "", "", "", "", "")
        verdict = f"[{VERDICT_STYLE.get(row.verdict, '')}]{row.verdict}[/]" if row.verdict else ""
        what = f"{row.what}\n[dim]{row.note}[/]" if row.note else row.what
        table.add_row(
            what,
            value_text(row.baseline),
            value_text(row.subject),
            ratio_text(row.ratio),
            target_text(row),
            verdict,
        )
    console.print(table)
    console.print(
        "[dim]cost × = subject / baseline for times, baseline / subject for rates: "
        "above 1, the subject costs more.[/]"
    )


def _title(report: Report) -> str:
    meta = report.meta
    return (
        f"bench ({meta.get('mode')}) at {meta.get('commit', '?')[:10]}, "
        f"{meta.get('cpus')} CPUs, load {meta.get('load_before')} -> {meta.get('load_after')}"
    )


def print_comparison(before: Report, after: Report, console: Console) -> None:
    table = Table(title=f"{_title(before)}\n  vs  {_title(after)}", show_lines=True, expand=True)
    table.add_column("measure", ratio=4)
    table.add_column("subject A", ratio=2)
    table.add_column("subject B", ratio=2)
    table.add_column("change", justify="right", no_wrap=True)
    table.add_column("cost × A", justify="right", no_wrap=True)
    table.add_column("cost × B", justify="right", no_wrap=True)
    table.add_column("target", justify="right", no_wrap=True)
    earlier = {row.key: row for row in before.rows}
    for row in after.rows:
        old = earlier.pop(row.key, None)
        table.add_row(
            row.what,
            value_text(_headline(old)),
            value_text(_headline(row)),
            _change(_headline(old), _headline(row)),
            ratio_text(old.ratio) if old else "",
            ratio_text(row.ratio),
            target_text(row),
        )
    for old in earlier.values():
        table.add_row(old.what, value_text(_headline(old)), "(absent)", "", "", "", "")
    console.print(table)
    console.print(
        "[dim]change: how the subject measure moved from A to B; "
        "+ is better (faster, or more per second).[/]"
    )


def _headline(row: Row | None) -> Measure | None:
    """The measure a row is about: its subject, or its baseline when it has none."""
    if row is None:
        return None
    return row.subject or row.baseline


def _change(old: Measure | None, new: Measure | None) -> str:
    if old is None or new is None or not old.value or new.value is None or old.unit != new.unit:
        return ""
    if new.is_rate:
        gain = new.value / old.value - 1
    else:
        gain = old.value / new.value - 1 if new.value else 0.0
    return f"{gain:+.0%}"
