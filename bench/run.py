"""Run the benches and print their table: `python bench/run.py [--quick|--full] [--json F]`.

--quick (the default) takes 3 to 4 minutes on a 2-core machine:
10^3 against 10^5 runs for the gate, 1 and 8 lease processes, the suite timed
on its four "window" scenarios only, and strength on the window mutants and
the listing variants. --full measures what the brief asks (10^3 against 10^6
runs, 1, 8 and 32 processes, every scenario of the suite, every mutant and
variant both ways) and takes 10 to 20 minutes, by the machine. Nothing here
asserts a time: the table reports, and `python bench/compare.py a.json b.json`
compares two runs.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg
import sqlalchemy
from rich.console import Console

from bench import (
    enqueue_rate,
    gate_cost,
    kit_cost,
    lease_rate,
    mechanisms,
    spread_cost,
    strength_cost,
)
from bench.report import Measure, Report, Row
from bench.stores import libpq_url, postgres_base_url, postgres_unavailable
from bench.table import print_report

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Plan:
    gate: gate_cost.GateSettings
    enqueue: enqueue_rate.EnqueueSettings
    lease: lease_rate.LeaseSettings
    kit: kit_cost.KitSettings
    strength: strength_cost.StrengthSettings
    spread: spread_cost.SpreadSettings
    mechanism_repeats: int


PLANS = {
    "quick": Plan(
        gate=gate_cost.GateSettings(small_runs=10**3, large_runs=10**5, samples=150),
        enqueue=enqueue_rate.EnqueueSettings(wakes=100),
        lease=lease_rate.LeaseSettings(
            processes=(1, 8), requests_per_process=5, minimum_requests=30
        ),
        kit=kit_cost.KitSettings(
            selection="window",
            round_trips=100,
            launches=3,
            examples=3,
            suite_without_reuse=True,
            suite_repeats=3,
        ),
        strength=strength_cost.StrengthSettings(
            mutants=("window_*",), variants=("*listing*",), jobs=2
        ),
        spread=spread_cost.SpreadSettings(thorough_examples=25),
        mechanism_repeats=1,
    ),
    "full": Plan(
        gate=gate_cost.GateSettings(small_runs=10**3, large_runs=10**6, samples=1000),
        enqueue=enqueue_rate.EnqueueSettings(wakes=1000),
        lease=lease_rate.LeaseSettings(
            processes=(1, 8, 32), requests_per_process=50, minimum_requests=300
        ),
        kit=kit_cost.KitSettings(
            selection=None,
            round_trips=1000,
            launches=10,
            examples=25,
            suite_without_reuse=False,
            suite_repeats=3,
        ),
        strength=strength_cost.StrengthSettings(mutants=(), variants=(), jobs=2),
        spread=spread_cost.SpreadSettings(thorough_examples=None),
        mechanism_repeats=2,
    ),
}
SECTIONS = ("gate", "enqueue", "lease", "kit", "strength", "spread")
ON_REQUEST = ("mechanisms",)
"""Sections run only when named (`--only mechanisms`): a run without process reuse alone takes
seven minutes."""
TITLES = {
    "gate": gate_cost.SECTION,
    "enqueue": enqueue_rate.SECTION,
    "lease": lease_rate.SECTION,
    "kit": kit_cost.SECTION,
    "strength": strength_cost.SECTION,
    "spread": spread_cost.SECTION,
    "mechanisms": mechanisms.SECTION,
}
WIDE = 150
"""Table width when the output is not a terminal (a log, a CI job)."""


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    mode = "full" if options.full else "quick"
    plan = PLANS[mode]
    if options.thorough_examples or options.json:
        examples = options.thorough_examples or plan.spread.thorough_examples
        log = options.json.with_suffix(".runs.jsonl") if options.json else None
        plan = replace(plan, spread=spread_cost.SpreadSettings(examples, log))
    _quiet_reference_logs()
    base_url = postgres_base_url()
    unavailable = postgres_unavailable(base_url) or ""
    postgres = None if unavailable else base_url
    steps: dict[str, Callable[[], list[Row]]] = {
        "gate": lambda: gate_cost.measure(plan.gate, postgres, unavailable),
        "enqueue": lambda: enqueue_rate.measure(plan.enqueue, postgres, unavailable),
        "lease": lambda: lease_rate.measure(plan.lease, postgres, unavailable),
        "kit": lambda: kit_cost.measure(plan.kit),
        "strength": lambda: strength_cost.measure(plan.strength),
        "spread": lambda: spread_cost.measure(plan.spread),
        "mechanisms": lambda: mechanisms.measure(plan.mechanism_repeats),
    }
    report = Report(meta=_meta(mode, postgres))
    console = Console() if sys.stdout.isatty() else Console(width=WIDE)
    for name in options.only or SECTIONS:
        with console.status(f"bench: {name}"):
            start = perf_counter()
            report.add(_section(name, steps[name]))
            report.meta["seconds"][name] = round(perf_counter() - start, 1)
    report.meta["load_after"] = _load()
    print_report(report, console)
    console.print(f"[dim]sections took {report.meta['seconds']} s[/]")
    if options.json:
        report.write(options.json)
        console.print(f"wrote {options.json}")
    return 0


def _section(name: str, measure: Callable[[], list[Row]]) -> list[Row]:
    """The section's rows. A section that breaks (the tree is shared) loses only its own rows."""
    try:
        return measure()
    except Exception as error:
        logging.getLogger("bench").exception("section %s failed", name)
        return [
            Row(
                key=f"{name}.failed",
                section=TITLES[name],
                what=f"the {name} section did not finish",
                baseline=Measure("", None, ""),
                note=f"not measured: {type(error).__name__}: {error}",
            )
        ]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--quick", action="store_true", help="the light mode (default)")
    modes.add_argument("--full", action="store_true", help="the sizes the brief asks for")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--only",
        action="append",
        choices=SECTIONS + ON_REQUEST,
        help="run only this section (repeatable)",
    )
    parser.add_argument(
        "--thorough-examples",
        type=int,
        help="examples per thorough search in the spread section (--full: 1000, --quick: 25); "
        "with --json, each of its runs is also written to <json>.runs.jsonl as it ends",
    )
    return parser


def _quiet_reference_logs() -> None:
    """Refusal warnings are expected by the thousand here; keep them off the terminal."""
    reference = logging.getLogger("reference")
    reference.addHandler(logging.NullHandler())
    reference.propagate = False


def _meta(mode: str, postgres: str | None) -> dict[str, object]:
    return {
        "mode": mode,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": _git("rev-parse", "HEAD"),
        "uncommitted_changes": bool(_git("status", "--porcelain", "reference", "conformance")),
        "machine": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_before": _load(),
        "python": platform.python_version(),
        "sqlalchemy": sqlalchemy.__version__,
        "psycopg": psycopg.__version__,
        "postgres": _server_version(postgres),
        "seconds": {},
    }


def _git(*args: str) -> str:
    result = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return result.stdout.strip()


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def _server_version(postgres: str | None) -> str | None:
    if postgres is None:
        return None
    with psycopg.connect(libpq_url(postgres)) as connection:
        row = connection.execute("SHOW server_version").fetchone()
    return None if row is None else str(row[0])


if __name__ == "__main__":
    sys.exit(main())
