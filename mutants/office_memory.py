"""Mutants of a gate that remembers: refusals that count, stretched windows, counts in memory;
and a queue that rewrites what it stored when its process starts.

The reference gate keeps nothing between wakes; each of these keeps one thing
in process memory, which a restart loses, or treats a start as a moment to repair the store.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from sqlalchemy import Executable, delete, update
from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.mutants.office_count import count_within
from conformance.reference.clock import Clock
from conformance.reference.db import Database
from conformance.reference.office import service as office_service
from conformance.reference.office.classifier import Scope, gate_subject
from conformance.reference.office.constants import ASSIGNMENT_WINDOW
from conformance.reference.office.gate import AllowanceGate, CountReadFault
from conformance.reference.office.models import Run
from conformance.reference.office.run_queue import RunQueue
from conformance.reference.office.telemetry import OfficeTelemetry
from conformance.reference.office.wake import Wake


class RememberingGate(AllowanceGate):
    """Notes, per task, the instants of its own decisions on attributed wakes."""

    remembers_admissions = False

    def __init__(self, telemetry: OfficeTelemetry, fault: CountReadFault) -> None:
        super().__init__(telemetry, fault)
        self.instants: defaultdict[str, list[datetime]] = defaultdict(list)

    def admits(self, session: Session, wake: Wake, now: datetime) -> bool:
        admitted = super().admits(session, wake, now)
        subject = gate_subject(wake.reason, wake.facts)
        if subject.scope is Scope.ATTRIBUTED and admitted == self.remembers_admissions:
            self.instants[subject.task_id].append(now)
        return admitted

    def in_window(self, task_id: str, now: datetime) -> int:
        return sum(
            1 for instant in self.instants[task_id] if now - ASSIGNMENT_WINDOW < instant <= now
        )


class RefusalCountingGate(RememberingGate):
    """Counts its refusals in the window as if they had used the allowance."""

    def _read_count(self, session: Session, task_id: str, now: datetime) -> int:
        return super()._read_count(session, task_id, now) + self.in_window(task_id, now)


class LastRefusalWindowGate(RememberingGate):
    """Measures the window back from the task's last refusal rather than from now."""

    def _read_count(self, session: Session, task_id: str, now: datetime) -> int:
        refusals = self.instants[task_id]
        anchor = refusals[-1] if refusals else now
        window = (Run.requested_at > anchor - ASSIGNMENT_WINDOW, Run.requested_at <= now)
        self._fault.trip()
        return session.scalar(count_within(task_id, *window)) or 0


class InMemoryCountGate(RememberingGate):
    """Counts the admissions it remembers instead of the stored runs."""

    remembers_admissions = True

    def _read_count(self, session: Session, task_id: str, now: datetime) -> int:
        self._fault.trip()
        return self.in_window(task_id, now)


class BrieflyCachedCountGate(RememberingGate):
    """Reads a task's count from the store at most once in half a minute, adding the admissions
    it made since (a cache on the hot path): a run deleted meanwhile is still counted."""

    remembers_admissions = True
    cache_for = timedelta(seconds=30)

    def __init__(self, telemetry: OfficeTelemetry, fault: CountReadFault) -> None:
        super().__init__(telemetry, fault)
        self.read_at: dict[str, tuple[datetime, int]] = {}

    def _read_count(self, session: Session, task_id: str, now: datetime) -> int:
        cached = self.read_at.get(task_id)
        if cached is None or now - cached[0] >= self.cache_for:
            cached = self.read_at[task_id] = (now, super()._read_count(session, task_id, now))
        else:
            self._fault.trip()
        read_at, stored = cached
        return stored + sum(1 for instant in self.instants[task_id] if instant >= read_at)


class RecoveringQueue(RunQueue):
    """A queue that repairs the store when its process starts, with what `recovery` says."""

    def __init__(
        self, db: Database, clock: Clock, telemetry: OfficeTelemetry, gate: AllowanceGate
    ) -> None:
        super().__init__(db, clock, telemetry, gate)
        with db.transaction() as session:
            session.execute(self.recovery(clock.now()))

    def recovery(self, now: datetime) -> Executable:
        raise NotImplementedError


class RestampingQueue(RecoveringQueue):
    """Puts every queued run back at the head of the queue with a fresh request instant: a
    recovery that treats runs left queued as requested anew."""

    def recovery(self, now: datetime) -> Executable:
        return update(Run).where(Run.status == "queued").values(requested_at=now)


class PurgingQueue(RecoveringQueue):
    """Drops every run left queued: a recovery that takes them for stale leftovers of the
    process that died, and so gives their places in the window back."""

    def recovery(self, now: datetime) -> Executable:
        return delete(Run).where(Run.status == "queued")


class OrphanRequeueingQueue(RecoveringQueue):
    """Puts every run left claimed or running back in the queue with a fresh request instant: a
    recovery that takes them for orphans of the worker that died with the process."""

    def recovery(self, now: datetime) -> Executable:
        orphaned = Run.status.in_(("claimed", "running"))
        return update(Run).where(orphaned).values(status="queued", requested_at=now)


def _gate(replacement: type[AllowanceGate]) -> Patch:
    return Patch(office_service, "AllowanceGate", replacement)


MUTANTS = [
    Mutant(
        "refusals_counted",
        "AC-OFFICE-ASSIGN-RATE-001.4",
        Capability.OFFICE,
        "adds the task's refusals in the window to the count, so retries keep the task locked",
        lambda: [_gate(RefusalCountingGate)],
    ),
    Mutant(
        "window_from_last_refusal",
        "AC-OFFICE-ASSIGN-RATE-001.4",
        Capability.OFFICE,
        "measures the window from the last refusal, so places free up W after it, not the wake",
        lambda: [_gate(LastRefusalWindowGate)],
    ),
    Mutant(
        "count_kept_in_memory",
        "AC-OFFICE-ASSIGN-RATE-002.4",
        Capability.OFFICE,
        "counts admissions in process memory: a restart resets it, a deleted run is still counted",
        lambda: [_gate(InMemoryCountGate)],
    ),
    Mutant(
        "count_cached_briefly",
        "AC-OFFICE-ASSIGN-RATE-002.4",
        Capability.OFFICE,
        "reads a task's count at most once in half a minute, adding its own admissions since: a "
        "run deleted meanwhile is still counted",
        lambda: [_gate(BrieflyCachedCountGate)],
    ),
    Mutant(
        "restart_restamps_queued_runs",
        "AC-OFFICE-ASSIGN-RATE-002.4",
        Capability.OFFICE,
        "on start, gives every queued run a fresh request instant, so a restart stretches the "
        "window of every task with runs still queued",
        lambda: [Patch(office_service, "RunQueue", RestampingQueue)],
    ),
    Mutant(
        "restart_purges_queued_runs",
        "AC-OFFICE-ASSIGN-RATE-002.4",
        Capability.OFFICE,
        "on start, drops every run left queued, so a restart gives back the places of every "
        "task with runs still queued",
        lambda: [Patch(office_service, "RunQueue", PurgingQueue)],
    ),
    Mutant(
        "restart_requeues_orphans",
        "AC-OFFICE-ASSIGN-RATE-002.4",
        Capability.OFFICE,
        "on start, puts runs left claimed or running back in the queue with a fresh request "
        "instant, so their places free up a window after the restart, not after their wakes",
        lambda: [Patch(office_service, "RunQueue", OrphanRequeueingQueue)],
    ),
]
