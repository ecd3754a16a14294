"""A break fails the criterion of the clause it breaks, and no other: shown by mutants whose
defects a scenario's tag would once have charged to several criteria.

Each mutant runs its spec's scenarios in-process, without property checks; the criteria the
verdict algebra fails are compared with the clauses the defect really breaks.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.reports.summary import criterion_verdicts
from conformance.spec.registry import default_registry
from conformance.stream.results import Status
from conformance.stream.stream_integrity import verify_stream

pytestmark = pytest.mark.cost(seconds=20)

OFFICE = "AC-OFFICE-ASSIGN-RATE-"
WORKREQ = "AC-ARMONIA-WORKREQ-"

BLAMED = {
    # the gate placed before the duplicate lookup: 001.5's ordering, nothing else
    "gate_before_dedup": ("office", {f"{OFFICE}001.5"}, {f"{OFFICE}001.5"}),
    # a negative usage taken under a declared zero-usage reading: 001.9's clause alone
    "negative_usage_under_zero_usage_reading": (
        "work-requests",
        {f"{WORKREQ}001.9"},
        {f"{WORKREQ}001.9"},
    ),
    # a dropped unparseable wake: admitted under every reading of OF-4 (001.1); 001.5's scenario
    # of the same wake also sees it neither admitted nor merged
    "unparseable_wake_dropped": (
        "office",
        {f"{OFFICE}001.1"},
        {f"{OFFICE}001.1", f"{OFFICE}001.5"},
    ),
    # a count kept in memory, lost on restart: 002.4, beside the allowance it really breaks
    "count_kept_in_memory": (
        "office",
        {f"{OFFICE}002.4"},
        {f"{OFFICE}{n}" for n in ("001.2", "001.5", "001.6", "002.1", "002.4")},
    ),
}


def failed_criteria(mutant: str, claim: str, folder: Path) -> set[str]:
    stream = folder / "results.jsonl"
    subprocess.run(
        [
            *(sys.executable, "-c", "from conformance.cli import main; main()", "run"),
            *("--impl", f"mutant:{mutant}", "--claim", claim, "--properties", "none"),
            *("--quiet", "--results", str(stream)),
        ],
        cwd=folder,
        capture_output=True,
        check=False,
        timeout=600,
    )
    return {
        verdict.criterion.id
        for verdict in criterion_verdicts(verify_stream(stream), default_registry())
        if verdict.status is Status.FAILED
    }


@pytest.mark.parametrize("mutant", sorted(BLAMED))
def test_a_defect_fails_the_criteria_whose_clauses_it_breaks(mutant: str, tmp_path: Path) -> None:
    claim, at_least, at_most = BLAMED[mutant]
    failed = failed_criteria(mutant, claim, tmp_path)
    assert at_least <= failed <= at_most, sorted(failed)
