"""Every hand-written mutant must be killed, each by the criterion it targets.

This is the CI run of `conformance strength` (a few minutes on two cores). Deselect it locally
with `-m "not slow"`.
"""

from __future__ import annotations

import pytest
from rich.console import Console

from conformance.strength import print_report, run_strength, select_mutants

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]


def test_every_hand_written_mutant_is_killed_by_its_own_criterion() -> None:
    report = run_strength(select_mutants([]), jobs=2)
    print_report(report, Console(width=160))
    assert report.control.error is None and report.control_failures() == [], "the reference fails"
    assert report.survivors() == [], f"mutants the suite does not kill: {report.survivors()}"
    assert report.succeeded()
    missed_own = [v.mutant.name for v in report.verdicts if not v.intended_kill]
    assert missed_own == [], f"mutants not killed by the criterion they target: {missed_own}"
