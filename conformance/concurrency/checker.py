"""Jepsen-style checks of the Office on a history, whatever the interleaving: the allowance's
bound under concurrency (the spec lets racing evaluations over-admit, so no order need explain
them), the assignments' generations, and whether a history's batches answered definitely enough
to judge anything. The work requests' histories are judged by the linearizability search
(`conformance.concurrency.linearizable`) over the pure model, not by rules of their own.

Each check reads a history's operations (see `conformance.concurrency.history`) and judges
only what the history proves. An operation whose outcome is unknown (`info`)
may or may not have taken effect: it is never counted as a success nor as a
refusal, and it can only excuse what would otherwise be a violation (a gap in
the generations, a refusal that needed it to have happened).

Real-time order is the only order a checker may assume: operation A precedes
B when A completed before B was invoked; otherwise they overlapped and either
may have taken effect first.

The checks work on any implementation's histories, recorded in-process or read
back from JSON lines. Each returns a CheckResult with its violations and the
number of operations it checked, so evidence can say how much was verified.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from conformance.concurrency.history import HistoryError, Operation

# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckResult:
    """What one check found. `counts` always holds `operations` (how many it checked)."""

    check: str
    violations: tuple[str, ...]
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def operations_checked(self) -> int:
        return self.counts.get("operations", 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "ok": self.ok,
            "violations": list(self.violations),
            "counts": dict(self.counts),
        }

    def __str__(self) -> str:
        verdict = "ok" if self.ok else f"{len(self.violations)} violation(s)"
        lines = [f"{self.check}: {verdict}; counts {dict(self.counts)}"]
        return "\n".join(lines + [f"  - {violation}" for violation in self.violations])


def over_admission_evidence(result: CheckResult) -> str:
    """The line a results record carries about the allowance under concurrency."""
    counts = result.counts
    return (
        f"largest over-admission observed: {counts.get('largest_over_admission', 0)} beyond the "
        f"allowance (largest concurrent batch {counts.get('largest_concurrency', 0)}; "
        f"{counts.get('definite', 0)} definite and {counts.get('indeterminate', 0)} "
        f"indeterminate outcomes checked; "
        f"{'no violations' if result.ok else f'{len(result.violations)} violation(s)'})"
    )


# --------------------------------------------------------------------------
# (d) The Office allowance
# --------------------------------------------------------------------------


def check_allowance(
    history: Sequence[Operation], *, allowance: int, window: timedelta
) -> CheckResult:
    """Agent assignment wakes against the per-task allowance N over the window W.

    - No refusal while fewer than N admitted agent wakes may lie in the
      refusal's window (t - W, t]: every admission or unknown outcome that may
      have come before it counts in its favour.
    - No admission once N admissions in its window had finished before it
      began: only a race may over-admit.
    - Over-admission (admitted wakes in one window beyond N) never exceeds
      K, the most agent wakes for the task ever in flight at once: the bound the
      spec states (a correct gate reaches at most K - 1, from one place left).

    The instants are the controlled clock's, as recorded on each operation.
    Only admissions (`queued`) count; a wake merged or deduplicated adds no row.
    """
    violations: list[str] = []
    counts: defaultdict[str, int] = defaultdict(int)
    wakes = [op for op in _select(history, "assign_task") if op.arguments.get("acting_agent_id")]
    for task_id, ops in _group(wakes, "task_id").items():
        for op in ops:
            if op.clock is None:
                raise HistoryError(f"process {op.process} has no clock instant to window it by")
        admitted = [op for op in ops if _wake_outcome(op) == "queued"]
        refused = [op for op in ops if _wake_outcome(op) == "rate_limited"]
        unknown = [op for op in ops if op.outcome == "info"]
        counts["admitted"] += len(admitted)
        counts["refused"] += len(refused)
        counts["unknown"] += len(unknown)
        counts["definite"] += len(ops) - len(unknown)
        counts["indeterminate"] += len(unknown)
        violations += _premature_refusals(task_id, refused, admitted + unknown, allowance, window)
        violations += _sequential_over_admissions(task_id, admitted, allowance, window)
        over = _largest_over_admission(admitted, allowance, window)
        concurrency = _largest_overlap(ops)
        counts["largest_over_admission"] = max(counts["largest_over_admission"], over)
        counts["largest_concurrency"] = max(counts["largest_concurrency"], concurrency)
        if over > concurrency:
            violations.append(
                f"task {task_id}: {over} admitted beyond the allowance of {allowance}, "
                f"with at most {concurrency} wakes in flight at once"
            )
    counts["operations"] = len(wakes)
    return CheckResult("allowance", tuple(violations), dict(counts))


def _wake_outcome(op: Operation) -> str | None:
    if op.outcome != "ok" or op.value.get("wake") is None:
        return None
    outcome: str = op.value["wake"]["outcome"]
    return outcome


def _in_window(op: Operation, end: datetime, window: timedelta) -> bool:
    assert op.clock is not None
    return end - window < op.clock <= end


def _premature_refusals(
    task_id: str,
    refused: Iterable[Operation],
    counted: Sequence[Operation],
    allowance: int,
    window: timedelta,
) -> list[str]:
    violations = []
    for refusal in refused:
        assert refusal.clock is not None
        possible = sum(
            1
            for op in counted
            if op.possibly_before(refusal) and _in_window(op, refusal.clock, window)
        )
        if possible < allowance:
            violations.append(
                f"task {task_id}: process {refusal.process} was refused with at most "
                f"{possible} admitted wakes in its window (allowance {allowance})"
            )
    return violations


def _sequential_over_admissions(
    task_id: str, admitted: Sequence[Operation], allowance: int, window: timedelta
) -> list[str]:
    violations = []
    for wake in admitted:
        assert wake.clock is not None
        finished = sum(
            1 for op in admitted if op.surely_before(wake) and _in_window(op, wake.clock, window)
        )
        if finished >= allowance:
            violations.append(
                f"task {task_id}: process {wake.process} was admitted although {finished} "
                f"admitted wakes in its window had finished before it began"
            )
    return violations


def _largest_over_admission(
    admitted: Sequence[Operation], allowance: int, window: timedelta
) -> int:
    """The most admitted wakes in any one window, beyond the allowance."""
    largest = 0
    for end in {op.clock for op in admitted if op.clock is not None}:
        in_window = sum(1 for op in admitted if _in_window(op, end, window))
        largest = max(largest, in_window - allowance)
    return largest


def _largest_overlap(ops: Iterable[Operation]) -> int:
    """The most operations in flight at one moment (an unfinished one never ends)."""
    moments = []
    for op in ops:
        moments.append((op.invoked_ns, 1))
        if op.completed_ns is not None:
            moments.append((op.completed_ns, -1))
    in_flight = largest = 0
    for _, step in sorted(moments, key=lambda moment: (moment[0], -moment[1])):
        in_flight += step
        largest = max(largest, in_flight)
    return largest


# --------------------------------------------------------------------------
# Assignment generations
# --------------------------------------------------------------------------


def check_assignment_generations(
    history: Sequence[Operation], *, exact_steps: bool = False
) -> CheckResult:
    """Per task: every committed assignee mutation moved the generation on, none lost.

    Two mutations never commit one generation and a later one never commits an
    older one; with `exact_steps`, each also adds exactly one (the reference's
    choice; the spec asks only that the generation moves).
    """
    violations: list[str] = []
    counts: defaultdict[str, int] = defaultdict(int)
    assignments = _select(history, "assign_task")
    initial = {
        op.value["task_id"]: op.value["assignment_generation"]
        for op in _select(history, "create_task")
        if op.outcome == "ok"
    }
    for task_id, ops in _group(assignments, "task_id").items():
        committed = [op for op in ops if op.outcome == "ok"]
        unknown = sum(1 for op in ops if op.outcome == "info")
        counts["committed"] += len(committed)
        counts["unknown"] += unknown
        violations += _generation_violations(
            f"task {task_id}",
            [(op, op.value["generation"]) for op in committed],
            unknown=unknown,
            start=initial.get(task_id),
            exact_steps=exact_steps,
        )
    counts["operations"] = len(assignments)
    return CheckResult("assignment_generations", tuple(violations), dict(counts))


# --------------------------------------------------------------------------
# Definite outcomes
# --------------------------------------------------------------------------


def check_definite_share(history: Sequence[Operation], *, minimum: float) -> CheckResult:
    """Every concurrent batch answered at least `minimum` of its calls definitely.

    Unknown outcomes excuse what they might have done, so a batch of nothing
    but unknown outcomes proves nothing: an implementation could answer every
    call "indeterminate" and pass every other check.
    """
    violations: list[str] = []
    counts: defaultdict[str, int] = defaultdict(int)
    batches: defaultdict[int, list[Operation]] = defaultdict(list)
    for op in history:
        if op.batch is not None:
            batches[op.batch].append(op)
    for batch, ops in sorted(batches.items()):
        definite = sum(1 for op in ops if op.outcome != "info")
        counts["definite"] += definite
        counts["indeterminate"] += len(ops) - definite
        if definite < minimum * len(ops):
            violations.append(
                f"batch {batch}: {definite} of {len(ops)} outcomes definite, fewer than "
                f"{minimum:.0%}: unknown outcomes cannot show the implementation right"
            )
    counts["batches"] = len(batches)
    counts["operations"] = sum(len(ops) for ops in batches.values())
    if not batches:
        violations.append("no concurrent batch was recorded")
    return CheckResult("definite_share", tuple(violations), dict(counts))


# --------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------


def _generation_violations(
    subject: str,
    granted: Sequence[tuple[Operation, int]],
    *,
    unknown: int,
    start: int | None,
    exact_steps: bool,
) -> list[str]:
    """Each generation granted once, rising in real-time order; by exactly one with
    `exact_steps`.

    A gap is then excused only by as many unknown outcomes, each of which may
    have taken the missing generation. Without a recorded start, the lowest
    generation granted is taken as the first.
    """
    violations = []
    by_generation: defaultdict[int, list[Operation]] = defaultdict(list)
    for op, generation in granted:
        by_generation[generation].append(op)
    for generation, ops in sorted(by_generation.items()):
        if len(ops) > 1:
            processes = ", ".join(str(op.process) for op in ops)
            violations.append(
                f"{subject}: generation {generation} granted {len(ops)} times "
                f"(processes {processes})"
            )
    generations = sorted(by_generation)
    if generations:
        first = start if start is not None else generations[0] - 1
        if generations[0] <= first:
            violations.append(f"{subject}: generation {generations[0]} does not rise above {first}")
        skipped = generations[-1] - first - len(generations)
        if exact_steps and skipped > unknown:
            violations.append(
                f"{subject}: generations {generations} from {first} skip {skipped} values, "
                f"but only {unknown} outcome(s) are unknown"
            )
    for earlier, earlier_generation in granted:
        for later, later_generation in granted:
            if earlier.surely_before(later) and earlier_generation >= later_generation:
                violations.append(
                    f"{subject}: process {later.process} got generation {later_generation} "
                    f"after process {earlier.process} had got {earlier_generation}"
                )
    return violations


def _select(history: Iterable[Operation], operation: str) -> list[Operation]:
    return [op for op in history if op.operation == operation]


def _group(ops: Iterable[Operation], argument: str) -> dict[str, list[Operation]]:
    groups: defaultdict[str, list[Operation]] = defaultdict(list)
    for op in ops:
        groups[str(op.arguments[argument])].append(op)
    return dict(groups)
