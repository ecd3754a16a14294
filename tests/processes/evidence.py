"""What a process test leaves behind: its history, the verdicts, and a printed summary.

Each test writes history.jsonl (every operation, replayable offline: the office's by
conformance.concurrency.checker, the work requests' by the linearizability search) and
evidence.json (the verdicts and their counts) into its pytest tmp dir, and prints the figures
docs/concurrency.md reports.
"""

from __future__ import annotations

import json
from typing import Any

from conformance.concurrency.checker import CheckResult, over_admission_evidence
from conformance.concurrency.history import HistoryRecorder
from conformance.concurrency.races import search_history

from .pool import CoordinatorPool


def conclude(recorder: HistoryRecorder, pool: CoordinatorPool, *results: CheckResult) -> None:
    """Keep the history and the verdicts next to the store, and say how much was checked."""
    directory = pool.store.directory.parent
    recorder.write(directory / "history.jsonl")
    label = f"[{pool.store.database}, {len(pool.processes)} processes]"
    evidence: dict[str, Any] = {
        "database": pool.store.database,
        "processes": len(pool.processes),
        "operations_recorded": len(recorder.operations()),
        "checks": [result.to_json() for result in results],
    }
    for result in results:
        if "largest_over_admission" in result.counts:
            evidence["largest_over_admission"] = result.counts["largest_over_admission"]
            print(f"{label} {over_admission_evidence(result)}")
        print(f"{label} {result.check}: {result.operations_checked} operations checked")
    (directory / "evidence.json").write_text(json.dumps(evidence, indent=2))


def assert_holds(*results: CheckResult, unknown: int = 0) -> None:
    """Every check holds, checked something, and left exactly `unknown` outcomes unknown."""
    for result in results:
        assert result.ok, str(result)
        assert result.operations_checked > 0, str(result)
        assert result.counts.get("unknown", 0) == unknown, str(result)


def searched(recorder: HistoryRecorder, *, unknown: int = 0) -> CheckResult:
    """Everything recorded so far, judged by the linearizability search over the pure model:
    it explains every answer and every read, and exactly `unknown` calls ended unknown (the
    processes the test killed: no share of definite outcomes is asked of it)."""
    search = search_history(recorder).check("linearizable")
    assert search.ok, str(search)
    left_unknown = sum(n for key, n in search.counts.items() if key.endswith("_unknown"))
    assert left_unknown == unknown, str(search)
    return search
