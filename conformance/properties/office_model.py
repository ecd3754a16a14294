"""A small pure model of everything the office capability shows for one wake.

Given what is stored (as the model predicted it) and the wake's shape, it predicts the
outcome, whether a row is inserted and which task's allowance that row counts toward, each
reason's counter move, and the warning the wake must log with its fields. The gates before the
allowance are modelled as far as the spec leans on them: a keyed wake whose key a stored row
holds is a duplicate, and a wake with a queued run of its agent, reason and task a few seconds
old merges into it; either is decided there, so on a full window it must not be refused.

It never reads the implementation: the effects runner (`office_effects`) compares what it
observes with this, and each prediction carries the clauses its checks rest on, chosen by the
shape of the wake and by what the window holds (a refusal with out-of-scope rows in the store
cites the clause that says they consume nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from conformance.driver import Outcome, RateLimitReason, Run
from conformance.oracle.office_shapes import (
    ADMITTED_CLAUSES,
    FAIL_OPEN_CLAUSES,
    QUIET_CLAUSES,
    Shape,
    parse_payload,
    shape_of,
)
from conformance.oracle.office_telemetry import MOVE_CLAUSES
from conformance.properties.hostile_data import TASK_ASSIGNED
from conformance.properties.office_operations import Assign, Produce, Raw

OF4_COUNTED = "counted-unattributed"
"""OF-4's alternative: a payload that is no object is in scope with no task."""

ODD_ROW_CLAUSES: dict[Shape, tuple[str, ...]] = {
    Shape.USER: ("AC-OFFICE-ASSIGN-RATE-001.1/others-consume-nothing",),
    Shape.OTHER: (
        "AC-OFFICE-ASSIGN-RATE-001.1/others-consume-nothing",
        "AC-OFFICE-ASSIGN-RATE-002.3/only-in-scope",
    ),
    Shape.PRODUCER: (
        "AC-OFFICE-ASSIGN-RATE-001.1/others-consume-nothing",
        "AC-OFFICE-ASSIGN-RATE-001.12/actorless-out-of-scope",
    ),
    Shape.UNATTRIBUTED: ("AC-OFFICE-ASSIGN-RATE-002.3/shapes",),
    Shape.UNPARSEABLE: ("AC-OFFICE-ASSIGN-RATE-001.1/others-consume-nothing", "OF-4"),
}
"""What a stored row of each shape other than an attributed agent wake's must not do to a count;
cited by every decision made while such a row is stored."""

REFUSAL = "refusal"
DEGRADED = "degraded admission"
UNATTRIBUTED = "unattributed admission"


@dataclass(frozen=True)
class ExpectedWarning:
    """The warning a wake must log: the fields it must carry and those it must not."""

    kind: str
    carried: dict[str, str]
    observed_count: int | None = None
    non_empty: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()


@dataclass(frozen=True)
class Expected:
    """What one wake must do, and the clauses each part of it rests on."""

    shape: Shape
    outcomes: frozenset[Outcome | None]
    """The outcomes it may end as (None: no wake at all); a merge stands besides."""
    outcome_cites: tuple[str, ...]
    moves: dict[RateLimitReason, int]
    move_cites: tuple[str, ...]
    warning: ExpectedWarning | None = None
    counts_for: str | None = None
    """The task whose allowance an inserted row counts toward."""
    degraded: bool = False
    """Decided without a count: the armed fault is spent, unless a merge upstream took it."""
    merges_into: str | None = None
    """The queued run the coalescer merges it into, as the model sees the store."""
    duplicate: bool = False
    """A stored row holds its key: the duplicate lookup decides it."""

    @property
    def refused(self) -> bool:
        return self.outcomes == {Outcome.RATE_LIMITED}


@dataclass
class StoredRun:
    """A row the model expects in the store: what the earlier gates match it by, the task it
    counts toward, and its shape (both set when the model inserts it)."""

    instant: datetime
    assignee: str
    path: str
    """How it was admitted (keyed, keyless, degraded, raw), for the clauses a count rests on."""
    reason: str
    bucket: str | None
    """The task the coalescer groups it under, when its payload names one as text."""
    key: str | None
    queued: bool
    counts_for: str | None = None
    shape: Shape = Shape.AGENT


@dataclass
class OfficeModel:
    allowance: int
    window: timedelta
    unparseable_counted: bool
    """Whether the implementation declared OF-4's counted-unattributed reading."""
    coalesce_window: timedelta
    lookback: timedelta
    """How long a stored key makes a redelivery a duplicate."""
    runs: dict[str, StoredRun] = field(default_factory=dict)
    merges: int = 0
    relabelled: bool = False
    """A merge has changed whether a row counts (the accepted relabel)."""
    restarted: bool = False
    deleted: bool = False
    fault_armed: bool = False
    """A count read is to fail: the next wake the gate decides by a count is degraded (a wake
    merged upstream reads no count, so the fault waits for the next one)."""
    fault_maybe_spent: bool = False
    """The armed fault may be spent unseen: a batch wake whose read failed may have been decided
    again in a fresh transaction and merged into a sibling's run, moving no counter. The next
    wake decided by a count shows which (`settle_fault`)."""

    # -- what is stored ---------------------------------------------------

    def counted(self, task_id: str) -> list[StoredRun]:
        return [run for run in self.runs.values() if run.counts_for == task_id]

    def in_window(self, task_id: str, now: datetime) -> int:
        start = now - self.window
        return sum(1 for run in self.counted(task_id) if start < run.instant <= now)

    def insert(self, run_id: str, expected: Expected, row: StoredRun) -> None:
        """The row an admitted wake inserted, counting where the prediction said."""
        row.counts_for, row.shape = expected.counts_for, expected.shape
        self.runs[run_id] = row

    def insert_concurrent(self, run_id: str, row: StoredRun) -> None:
        """A row of a concurrent batch: an agent wake of the task, admitted."""
        row.counts_for, row.shape = row.bucket, Shape.AGENT
        self.runs[run_id] = row

    def arm_fault(self) -> None:
        self.fault_armed, self.fault_maybe_spent = True, False

    def settle_fault(self, moved_degraded: bool) -> bool:
        """Whether a wake the model called degraded is judged as one: unless the fault may have
        been spent unseen and the counter shows no degraded admission, in which case it was
        spent, and the wake is judged anew."""
        maybe, self.fault_maybe_spent = self.fault_maybe_spent, False
        if maybe and not moved_degraded:
            self.fault_armed = False
            return False
        return True

    def restart(self) -> None:
        """A restart keeps the store and drops what a process held, an armed fault among it
        (docs/protocol.md, Restart)."""
        self.restarted = True
        self.fault_armed = self.fault_maybe_spent = False

    def delete(self, run_id: str) -> None:
        self.runs.pop(run_id, None)
        self.deleted = True

    def recount(self, counts: dict[str, str | None]) -> None:
        """After a merge, which may relabel the row it keeps, take which rows count from the
        store (each merge may move the observed count by one: the relabel the spec accepts)."""
        self.merges += 1
        for run_id, run in self.runs.items():
            if run_id in counts and run.counts_for != counts[run_id]:
                run.counts_for = counts[run_id]
                self.relabelled = True

    def adopt(self, runs: list[Run], counts: dict[str, str | None]) -> None:
        """After a surprise, take the store as the implementation shows it (each row, whether
        it is queued and the task it counts toward), so that the next operation is judged from
        what is there and one mismatch never cascades into the rest of the schedule."""
        adopted: dict[str, StoredRun] = {}
        for run in runs:
            kept = self.runs.get(run.run_id)
            row = row_of(run, kept.path if kept else "adopted", run.status == "queued")
            row.counts_for, row.shape = counts.get(run.run_id), kept.shape if kept else row.shape
            adopted[run.run_id] = row
        self.runs = adopted

    def merge_target(
        self, agent_id: str, task_id: str | None, now: datetime, reason: str = TASK_ASSIGNED
    ) -> str | None:
        """The newest queued run of the agent, reason and task, requested within the coalescing
        window, that a wake merges into (none for a wake whose task is not text)."""
        start = now - self.coalesce_window
        return next(
            (
                run_id
                for run_id, run in reversed(self.runs.items())
                if run.queued
                and (run.reason, run.assignee) == (reason, agent_id)
                and task_id is not None
                and run.bucket == task_id
                and start < run.instant <= now
            ),
            None,
        )

    def holds_key(self, key: str | None, now: datetime) -> bool:
        return key is not None and any(
            run.key == key and now - run.instant < self.lookback for run in self.runs.values()
        )

    # -- what a wake must do --------------------------------------------

    def predict(self, op: Assign | Produce | Raw) -> Expected:
        if isinstance(op, Produce):
            return self.produced(op)
        if isinstance(op, Raw):
            return self.raw(op)
        return self.assignment(op)

    def assignment(self, op: Assign) -> Expected:
        if not op.assignee:
            return quiet(Shape.UNASSIGNMENT, frozenset({None}))
        if not op.acting:
            merging = self.merge_target(op.assignee, op.task_id, op.at)
            return replace(quiet(Shape.USER, frozenset({Outcome.QUEUED})), merges_into=merging)
        return self.decided(op.task_id, op.at, op.assignee, op.acting, op.keyless)

    def raw(self, op: Raw) -> Expected:
        shape = shape_of(op.reason, op.payload)
        fields = parse_payload(op.payload) or {}
        acting = fields.get("actor_id")
        duplicate = self.holds_key(op.dedup_key, op.at)
        if shape is Shape.AGENT:
            if duplicate:
                return redelivered()
            return self.decided(
                fields["task_id"], op.at, op.agent_id, str(acting), op.dedup_key is None
            )
        if shape is Shape.UNATTRIBUTED or (shape is Shape.UNPARSEABLE and self.unparseable_counted):
            expected = unattributed(shape, acting, self.allowance)
        else:
            expected = quiet(shape, frozenset({Outcome.QUEUED}))
        if duplicate:
            deduplicated = expected.outcomes | {Outcome.DEDUPLICATED}
            return replace(expected, outcomes=deduplicated, duplicate=True)
        merging = self.merge_target(op.agent_id, bucket_of(fields), op.at, op.reason)
        return replace(expected, merges_into=merging)

    def produced(self, op: Produce) -> Expected:
        """An actorless producer's wake is never limited; whether an earlier gate suppresses a
        second one (its key, a merge) is outside this spec."""
        outcomes = frozenset({Outcome.QUEUED, Outcome.DEDUPLICATED})
        merging = self.merge_target(op.agent_id, op.task_id, op.at)
        return replace(quiet(Shape.PRODUCER, outcomes), merges_into=merging)

    def decided(
        self, task_id: str, now: datetime, assignee: str, acting: str, keyless: bool
    ) -> Expected:
        merging = self.merge_target(assignee, task_id, now)
        observed = self.in_window(task_id, now)
        if merging is not None and observed >= self.allowance:
            return merged_on_a_full_window(task_id, merging)
        if self.fault_armed:
            return replace(self.degraded(task_id, assignee, acting), merges_into=merging)
        cites = self.count_cites(task_id, now, keyless)
        if observed < self.allowance:
            return Expected(
                Shape.AGENT,
                frozenset({Outcome.QUEUED}),
                (*ADMITTED_CLAUSES[Shape.AGENT], *self.admit_cites(task_id, now), *cites),
                {},
                (*QUIET_CLAUSES[Shape.AGENT], *cites),
                counts_for=task_id,
                merges_into=merging,
            )
        carried = refusal_fields(task_id, assignee, acting, self.allowance)
        return Expected(
            Shape.AGENT,
            frozenset({Outcome.RATE_LIMITED}),
            (*self.refuse_cites(task_id, now), *cites),
            {RateLimitReason.ALLOWANCE_EXHAUSTED: 1},
            (*MOVE_CLAUSES[RateLimitReason.ALLOWANCE_EXHAUSTED], *cites),
            ExpectedWarning(REFUSAL, carried, observed_count=observed),
        )

    def degraded(self, task_id: str, assignee: str, acting: str) -> Expected:
        carried = refusal_fields(task_id, assignee, acting, self.allowance)
        return Expected(
            Shape.AGENT,
            frozenset({Outcome.QUEUED}),
            FAIL_OPEN_CLAUSES,
            {RateLimitReason.COUNT_READ_FAILED: 1},
            MOVE_CLAUSES[RateLimitReason.COUNT_READ_FAILED],
            ExpectedWarning(DEGRADED, carried, non_empty=("error",), absent=("observed_count",)),
            counts_for=task_id,
            degraded=True,
        )

    # -- the clauses a decision rests on -------------------------------

    def admit_cites(self, task_id: str, now: datetime) -> tuple[str, ...]:
        """Admissible: when a counted row is exactly W old, its no longer counting; when any
        has left the window, its place coming back."""
        start = now - self.window
        instants = [run.instant for run in self.counted(task_id)]
        edge = (
            ("AC-OFFICE-ASSIGN-RATE-001.11/exactly-w-old", "AC-OFFICE-ASSIGN-RATE-001.11/half-open")
            if start in instants
            else ()
        )
        freed = (
            ("AC-OFFICE-ASSIGN-RATE-001.4/frees-after-window",)
            if any(i <= start for i in instants)
            else ()
        )
        return (*edge, *freed)

    def refuse_cites(self, task_id: str, now: datetime) -> tuple[str, ...]:
        start = now - self.window
        inside = [r for r in self.counted(task_id) if start < r.instant <= now]
        edge = (
            ("AC-OFFICE-ASSIGN-RATE-001.11/half-open",)
            if any(r.instant == start + timedelta(microseconds=1) for r in inside)
            else ()
        )
        consumed = (
            ("AC-OFFICE-ASSIGN-RATE-001.4/admitted-consume",)
            if any(r.path != "keyed" for r in inside)
            else ()
        )
        assignees = (
            ("AC-OFFICE-ASSIGN-RATE-001.3/any-assignee",)
            if len({r.assignee for r in inside}) > 1
            else ()
        )
        return ("AC-OFFICE-ASSIGN-RATE-001.2/serial-bound", *edge, *consumed, *assignees)

    def count_cites(self, task_id: str, now: datetime, keyless: bool) -> tuple[str, ...]:
        """What else the count of this decision rests on: the odd rows stored, other tasks'
        rows, deleted rows, a restart, the keyless path."""
        odd = [
            c
            for run in self.runs.values()
            if run.shape in ODD_ROW_CLAUSES
            for c in ODD_ROW_CLAUSES[run.shape]
        ]
        others = (
            ("AC-OFFICE-ASSIGN-RATE-001.3/per-task",)
            if any(r.counts_for not in (None, task_id) for r in self.runs.values())
            else ()
        )
        keyless_cite = ("AC-OFFICE-ASSIGN-RATE-001.8/keyless-bounded",) if keyless else ()
        state = (
            *(("AC-OFFICE-ASSIGN-RATE-002.4/deleted-row",) if self.deleted else ()),
            *(("AC-OFFICE-ASSIGN-RATE-002.4/restart",) if self.restarted else ()),
            *(("AC-OFFICE-ASSIGN-RATE-001.4/relabel-tolerance",) if self.relabelled else ()),
        )
        return tuple(dict.fromkeys((*odd, *others, *keyless_cite, *state)))


def row_of(run: Run, path: str, queued: bool) -> StoredRun:
    """The model's row for a run the implementation stored."""
    fields = parse_payload(run.payload) or {}
    return StoredRun(
        run.requested_at, run.agent_id, path, run.reason, bucket_of(fields), run.dedup_key, queued
    )


def bucket_of(fields: dict[str, Any]) -> str | None:
    """The task a payload names, when it names one as text."""
    task_id = fields.get("task_id")
    return task_id if isinstance(task_id, str) and task_id else None


def refusal_fields(task_id: str, assignee: str, acting: str, allowance: int) -> dict[str, str]:
    return {
        "task_id": task_id,
        "assignee_agent_profile_id": assignee,
        "acting_agent_id": acting,
        "allowance": str(allowance),
    }


def redelivered() -> Expected:
    """An agent wake whose key a stored row holds: the duplicate lookup's, never the gate's."""
    return Expected(
        Shape.AGENT,
        frozenset({Outcome.DEDUPLICATED}),
        ("AC-OFFICE-ASSIGN-RATE-001.5/after-dedup", "AC-OFFICE-ASSIGN-RATE-002.5/keyed-once"),
        {},
        (
            "AC-OFFICE-ASSIGN-RATE-001.5/suppressed-not-counted",
            "AC-OFFICE-ASSIGN-RATE-002.5/keyed-once",
        ),
        duplicate=True,
    )


def merged_on_a_full_window(task_id: str, target: str) -> Expected:
    """An agent wake the coalescer takes while the window is full: merged, not refused (a
    merge counts the row it keeps for the task, as the reference's overwrite does)."""
    return Expected(
        Shape.AGENT,
        frozenset({Outcome.COALESCED}),
        (
            "AC-OFFICE-ASSIGN-RATE-001.5/after-coalescing",
            "AC-OFFICE-ASSIGN-RATE-001.5/suppressed-not-counted",
            "AC-OFFICE-ASSIGN-RATE-001.2/serial-bound",
        ),
        {},
        ("AC-OFFICE-ASSIGN-RATE-001.5/suppressed-not-counted",),
        counts_for=task_id,
        merges_into=target,
    )


def quiet(shape: Shape, outcomes: frozenset[Outcome | None]) -> Expected:
    """A wake outside the allowance: admitted (or, for an unassignment, none), counting
    toward nothing, moving no counter."""
    admitted = ADMITTED_CLAUSES.get(shape, QUIET_CLAUSES[shape])
    return Expected(shape, outcomes, admitted, {}, QUIET_CLAUSES[shape])


def unattributed(shape: Shape, acting: Any, allowance: int) -> Expected:
    """In scope with no task: admitted, counted and logged as unattributed (an unparseable
    payload only under OF-4's alternative, and then citing it)."""
    reading = ("OF-4",) if shape is Shape.UNPARSEABLE else ()
    carried = {"reason": RateLimitReason.TASK_UNATTRIBUTED.value, "allowance": str(allowance)}
    if isinstance(acting, str) and acting:
        carried["acting_agent_id"] = acting
    return Expected(
        shape,
        frozenset({Outcome.QUEUED}),
        (*ADMITTED_CLAUSES[Shape.UNATTRIBUTED], *reading),
        {RateLimitReason.TASK_UNATTRIBUTED: 1},
        (*MOVE_CLAUSES[RateLimitReason.TASK_UNATTRIBUTED], *reading),
        ExpectedWarning(UNATTRIBUTED, carried, absent=("task_id",)),
    )
