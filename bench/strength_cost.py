"""How long `conformance strength` takes, forked from warm servers beside the plain way (each
suite run in a fresh interpreter, `conformance.strength.fresh_interpreters`), in the same run.

Both judge the same mutants and variants here, and every verdict must come out the same: a
faster strength run that judged differently would be no use. The fork server is kept only while
it buys at least a fifth of the wall time.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.report import Measure, Row
from conformance.strength import (
    Runners,
    StrengthReport,
    fresh_interpreters,
    run_strength,
    select_mutants,
    select_variants,
)

SECTION = "5. Strength (mutants and variants)"
BUDGET_S = 90.0
"""The budget for every mutant and every variant on 2 cores."""


@dataclass(frozen=True)
class StrengthSettings:
    mutants: tuple[str, ...]
    """Glob patterns; none means every mutant."""
    variants: tuple[str, ...]
    jobs: int


def measure(settings: StrengthSettings) -> list[Row]:
    first = _run(settings, fresh_interpreters)
    today = _run(settings, None)
    scope = _scope(first)
    differing = _differing_verdicts(first, today)
    rows = [
        Row(
            key="strength.wall",
            section=SECTION,
            what=f"strength wall time ({scope}), fresh interpreters vs forked",
            baseline=Measure("fresh interpreters", first.wall_seconds, "s"),
            subject=Measure("forked from warm servers", today.wall_seconds, "s"),
            target=0.8,
            note=f"fresh: {_work(first)}; forked: {_work(today)}",
        ),
        Row(
            key="strength.same_verdicts",
            section=SECTION,
            what=f"strength verdicts ({scope}) that differ between the two ways",
            baseline=Measure("verdicts", float(len(first.verdicts) + len(first.variants)), ""),
            subject=Measure("differing", float(len(differing)), ""),
            target=0.0,
            note="; ".join(differing) or "every mutant and variant judged alike",
        ),
    ]
    if not settings.mutants and not settings.variants:
        rows.append(
            Row(
                key="strength.budget",
                section=SECTION,
                what="strength wall time, every mutant and variant, against the 90 s budget",
                baseline=Measure("budget", BUDGET_S, "s"),
                subject=Measure("today", today.wall_seconds, "s"),
                target=1.0,
                note="forked from warm servers",
            )
        )
    return rows


def _run(settings: StrengthSettings, runners: Runners | None) -> StrengthReport:
    return run_strength(
        select_mutants(settings.mutants),
        variants=select_variants(settings.variants),
        jobs=settings.jobs,
        partial=bool(settings.mutants or settings.variants),
        runners=runners,
    )


def _scope(report: StrengthReport) -> str:
    return f"{len(report.verdicts)} mutants, {len(report.variants)} variants, {report.jobs} jobs"


def _work(report: StrengthReport) -> str:
    """Seconds of suite runs, by kind: where the wall time went."""
    mutants = sum(verdict.seconds for verdict in report.verdicts)
    variants = sum(verdict.seconds for verdict in report.variants)
    return (
        f"control {report.control.seconds:.1f} s, mutants {mutants:.0f} s, "
        f"variants {variants:.0f} s of runs"
    )


def _differing_verdicts(first: StrengthReport, today: StrengthReport) -> list[str]:
    before, after = first.judgements(), today.judgements()
    return [
        f"{name}: {before.get(name)} vs {after.get(name)}"
        for name in sorted(set(before) | set(after))
        if before.get(name) != after.get(name)
    ]
