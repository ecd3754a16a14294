"""Which (clause, path) pairs of the path inventory the office effects model checks, measured
by running the model alone over drawn schedules, as if the implementation answered as predicted.

The runner (`office_effects`) checks the counter, the log, the rows and the labels after every
wake whatever its path, so a pair is the model's exactly when its schedules reach that effect
on that path. This replays the model's own predictions to find out which ones they reach; a
merge overwrites the row it keeps, as the reference's does. A redelivery takes the stored
run's payload, which the model does not keep, so the replay passes over it: what it claims
is the lower bound.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from conformance.oracle.office_shapes import parse_payload
from conformance.properties.hostile_data import TASK_ASSIGNED
from conformance.properties.office_model import (
    ODD_ROW_CLAUSES,
    UNATTRIBUTED,
    OfficeModel,
    StoredRun,
    bucket_of,
)
from conformance.properties.office_operations import (
    Assign,
    Batch,
    DeleteNewest,
    Operation,
    Produce,
    Raw,
    Restart,
    arms_the_fault,
    path_of,
    way_of,
)
from conformance.spec.path_inventory import Pair, effects

BURST = timedelta(minutes=1)
"""Refusals of a task closer together than this are a burst (a log throttle's usual span)."""

_EFFECTS_OF = {
    "refused": ("refusal-outcome", "refusal-row", "refusal-counter", "refusal-log"),
    "degraded": ("degraded-counter", "degraded-log"),
    "unattributed": ("unattributed-counter", "unattributed-log"),
}


@dataclass
class Coverage:
    """The model replayed over schedules, and the (effect, path) pairs its checks met."""

    model: OfficeModel
    met: set[tuple[str, str]] = field(default_factory=set)
    last_refusal: dict[str, datetime] = field(default_factory=dict)
    serial: int = 0

    def replay(self, schedule: Iterable[Operation]) -> None:
        for op in schedule:
            if isinstance(op, Restart):
                self.model.restart()
            elif isinstance(op, DeleteNewest) and self.model.runs:
                self.model.delete(list(self.model.runs)[-1])
            elif isinstance(op, Batch):
                self.batch(op)
            elif isinstance(op, Assign | Produce | Raw):
                self.wake(op)

    def wake(self, op: Assign | Produce | Raw) -> None:
        if arms_the_fault(op):
            self.model.arm_fault()
        expected = self.model.predict(op)
        if expected.duplicate:
            return
        if expected.merges_into is not None:
            self.model.recount({expected.merges_into: expected.counts_for})
            return
        context = self.context()
        if expected.refused:
            self.refusal(
                op.task_id if not isinstance(op, Raw) else task_of(op),
                op.at,
                (way_of(op), *context),
            )
            self.met.add(("label-scan", "after-refusal"))
        elif expected.degraded:
            self.model.fault_armed = False
            self.meet("degraded", (way_of(op),))
            self.met.add(("label-scan", "after-degraded-admission"))
        elif (
            expected.warning is not None
            and expected.warning.kind == UNATTRIBUTED
            and isinstance(op, Raw)
        ):
            self.meet("unattributed", (task_id_shape(op.payload),))
            self.met.add(("label-scan", "after-unattributed"))
        if not expected.refused and expected.outcomes != {None}:
            self.serial += 1
            self.model.insert(f"run-{self.serial}", expected, self.row(op))

    def row(self, op: Assign | Produce | Raw) -> StoredRun:
        """The row the reference would store for an admitted wake (keys made up, but unique)."""
        queued = op.settle_as == "queued"
        if isinstance(op, Raw):
            bucket = bucket_of(parse_payload(op.payload) or {})
            return StoredRun(op.at, op.agent_id, "raw", op.reason, bucket, op.dedup_key, queued)
        agent = op.assignee if isinstance(op, Assign) else op.agent_id
        key = None if isinstance(op, Assign) and op.keyless else f"replayed-{self.serial}"
        return StoredRun(op.at, agent, path_of(op), TASK_ASSIGNED, op.task_id, key, queued)

    def batch(self, op: Batch) -> None:
        room = max(0, self.model.allowance - self.model.in_window(op.task_id, op.at))
        admitted = min(room, len(op.assignees))
        for assignee in op.assignees[:admitted]:
            self.serial += 1
            row = StoredRun(op.at, assignee, "concurrent", TASK_ASSIGNED, op.task_id, None, False)
            self.model.insert_concurrent(f"run-{self.serial}", row)
        for row in self.model.runs.values():
            row.queued = op.settle_as == "queued"
        if admitted < len(op.assignees):
            self.refusal(op.task_id, op.at, ("concurrent",))

    def refusal(self, task_id: str, at: datetime, paths: tuple[str, ...]) -> None:
        last = self.last_refusal.get(task_id)
        burst = ("burst",) if last is not None and at - last < BURST else ()
        self.last_refusal[task_id] = at
        self.meet("refused", (*paths, *burst))

    def meet(self, kind: str, paths: tuple[str, ...]) -> None:
        self.met |= {(effect, path) for effect in _EFFECTS_OF[kind] for path in paths}

    def context(self) -> tuple[str, ...]:
        runs = self.model.runs.values()
        return (
            *(("after-restart",) if self.model.restarted else ()),
            *(("after-delete",) if self.model.deleted else ()),
            *(("after-odd-wake",) if any(run.shape in ODD_ROW_CLAUSES for run in runs) else ()),
            *(("after-degraded",) if any(run.path == "degraded" for run in runs) else ()),
            *(("after-relabel",) if self.model.relabelled else ()),
        )

    def pairs(self) -> set[Pair]:
        """The met (effect, path) pairs as the inventory's (clause, path) pairs."""
        clause_of = {effect.id: effect.clause for effect in effects()}
        return {(clause_of[effect], path) for effect, path in self.met}


def task_of(op: Raw) -> str:
    return str((parse_payload(op.payload) or {}).get("task_id"))


def task_id_shape(payload: str) -> str:
    fields = parse_payload(payload) or {}
    if "task_id" not in fields:
        return "task-id-absent"
    value = fields["task_id"]
    if value is None:
        return "task-id-null"
    return "task-id-empty" if value == "" else "task-id-not-a-string"
