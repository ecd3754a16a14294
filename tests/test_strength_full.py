"""Both halves of the kit's strength: every mutant killed by its own criterion, every legal
variant accepted (passed, or diverged only on the interpretations it names).

This is the CI run of `conformance strength`, the way it runs by default: every suite run forked
from a warm server, mutants on their own criterion's scenarios first, variants on their
capability's whole suite, both in-process (tests/test_strength.py holds this way to the first
one, variants through `exec:`, on a few of each). Deselect it locally with `-m "not slow"`.
"""

from __future__ import annotations

import pytest
from rich.console import Console

from conformance.strength import run_strength, select_mutants, select_variants
from conformance.strength_report import print_report

pytestmark = [pytest.mark.slow(seconds=240), pytest.mark.timeout(1500)]


def test_every_mutant_is_killed_by_its_own_criterion_and_every_variant_is_accepted() -> None:
    report = run_strength(select_mutants([]), variants=select_variants([]), jobs=2)
    print_report(report, Console(width=160))
    assert report.control.error is None and report.control_failures() == [], "the reference fails"
    assert report.survivors() == [], f"mutants the suite does not kill: {report.survivors()}"
    missed_own = [v.mutant.name for v in report.verdicts if not v.intended_kill]
    assert missed_own == [], f"mutants not killed by the criterion they target: {missed_own}"
    falsely_failed = {
        v.variant.name: v.false_failures or v.error for v in report.rejected_variants()
    }
    assert falsely_failed == {}, f"legal variants the kit fails: {falsely_failed}"
    undeclared = [
        v.variant.name for v in report.variants if not v.diverged_on <= v.variant.diverges
    ]
    assert undeclared == []
    assert report.succeeded()
