"""Mutants of the enqueue pipeline: stage order, what a refusal leaves and reports, merging."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference.office import dedup as office_dedup
from conformance.reference.office import run_queue as office_run_queue
from conformance.reference.office import service as office_service
from conformance.reference.office.coalescer import coalesce
from conformance.reference.office.dedup import recent_duplicate
from conformance.reference.office.gate import GateVerdict
from conformance.reference.office.models import Run
from conformance.reference.office.run_queue import RunQueue, _insert
from conformance.reference.office.telemetry import DedupKind
from conformance.reference.office.wake import EnqueueResult, Outcome, Wake


class ReorderedQueue(RunQueue):
    """The reference pipeline with its first three stages run in `order`."""

    order: tuple[str, ...] = ("duplicate", "coalescing", "gate")

    def _decide(
        self, session: Session, wake: Wake, now: datetime, gate: GateVerdict
    ) -> EnqueueResult:
        stages: dict[str, Stage] = {
            "duplicate": self._duplicate,
            "coalescing": self._coalescing,
            "gate": _gated(gate),
        }
        for name in self.order:
            decided = stages[name](session, wake, now)
            if decided is not None:
                return decided
        return EnqueueResult(Outcome.QUEUED, str(_insert(session, wake, now).id))

    def _duplicate(self, session: Session, wake: Wake, now: datetime) -> EnqueueResult | None:
        duplicate = recent_duplicate(session, wake, now)
        if duplicate is None:
            return None
        self._telemetry.deduplicated(wake.reason, DedupKind.WINDOWED)
        return EnqueueResult(Outcome.DEDUPLICATED, str(duplicate.id))

    def _coalescing(self, session: Session, wake: Wake, now: datetime) -> EnqueueResult | None:
        merged = coalesce(session, wake, now)
        return None if merged is None else EnqueueResult(Outcome.COALESCED, str(merged.id))


Stage = Callable[[Session, Wake, datetime], EnqueueResult | None]


def _gated(gate: GateVerdict) -> Stage:
    def stage(session: Session, wake: Wake, now: datetime) -> EnqueueResult | None:
        return None if gate(session, wake, now) else EnqueueResult(Outcome.RATE_LIMITED)

    return stage


class GateFirstQueue(ReorderedQueue):
    order = ("gate", "duplicate", "coalescing")


class GateBeforeCoalescingQueue(ReorderedQueue):
    order = ("duplicate", "gate", "coalescing")


class KeylessGateBeforeCoalescingQueue(GateBeforeCoalescingQueue):
    """A keyless path written apart, which gates before it tries to coalesce; a keyed wake keeps
    the reference's order."""

    def _decide(
        self, session: Session, wake: Wake, now: datetime, gate: GateVerdict
    ) -> EnqueueResult:
        if wake.dedup_key is not None:
            return RunQueue._decide(self, session, wake, now, gate)
        return super()._decide(session, wake, now, gate)


class SilentRefusalQueue(RunQueue):
    """Reports a refusal to the producer as `none`, as if nothing had been attempted."""

    def _decide(
        self, session: Session, wake: Wake, now: datetime, gate: GateVerdict
    ) -> EnqueueResult:
        decided = super()._decide(session, wake, now, gate)
        if decided.outcome is Outcome.RATE_LIMITED:
            return EnqueueResult(Outcome.NONE)
        return decided


class AuditedRefusalQueue(RunQueue):
    """Keeps a refused wake on record as a cancelled run, for the audit trail."""

    def _decide(
        self, session: Session, wake: Wake, now: datetime, gate: GateVerdict
    ) -> EnqueueResult:
        decided = super()._decide(session, wake, now, gate)
        if decided.outcome is Outcome.RATE_LIMITED:
            _insert(session, wake, now).status = "cancelled"
        return decided


def coalesce_refreshing(session: Session, wake: Wake, now: datetime) -> Run | None:
    """Merges as the reference does, then stamps the surviving run with the merge's instant,
    as a coalescer that takes a merge for a fresh request would: the admitted wake it holds
    then frees its place later than one window after its own request."""
    target = coalesce(session, wake, now)
    if target is not None:
        target.requested_at = now
    return target


def _queue(replacement: type[RunQueue]) -> Patch:
    return Patch(office_service, "RunQueue", replacement)


MUTANTS = [
    Mutant(
        "gate_before_dedup",
        "AC-OFFICE-ASSIGN-RATE-001.5",
        Capability.OFFICE,
        "applies the allowance before duplicate lookup and coalescing (the trap seen in the wild)",
        lambda: [_queue(GateFirstQueue)],
    ),
    Mutant(
        "gate_before_coalescing",
        "AC-OFFICE-ASSIGN-RATE-001.5",
        Capability.OFFICE,
        "applies the allowance after duplicate lookup but before coalescing",
        lambda: [_queue(GateBeforeCoalescingQueue)],
    ),
    Mutant(
        "keyless_gate_before_coalescing",
        "AC-OFFICE-ASSIGN-RATE-001.5",
        Capability.OFFICE,
        "applies the allowance before coalescing on the keyless path only",
        lambda: [_queue(KeylessGateBeforeCoalescingQueue)],
    ),
    Mutant(
        "refusal_records_row",
        "AC-OFFICE-ASSIGN-RATE-001.6",
        Capability.OFFICE,
        "inserts a refused wake as a cancelled run (keeping its key), for the audit trail",
        lambda: [_queue(AuditedRefusalQueue)],
    ),
    Mutant(
        "refusal_reported_as_none",
        "AC-OFFICE-ASSIGN-RATE-003.5",
        Capability.OFFICE,
        "tells the producer `none` for a refused wake",
        lambda: [_queue(SilentRefusalQueue)],
    ),
    Mutant(
        "merge_refreshes_instant",
        "AC-OFFICE-ASSIGN-RATE-001.4",
        Capability.OFFICE,
        "a merge moves the surviving run's request instant to its own, keeping it in the window",
        lambda: [Patch(office_run_queue, "coalesce", coalesce_refreshing)],
    ),
    Mutant(
        "dedup_lookback_in_seconds",
        "AC-OFFICE-ASSIGN-RATE-002.5",
        Capability.OFFICE,
        "the duplicate lookup spans 24 seconds instead of 24 hours (a unit slip)",
        lambda: [Patch(office_dedup, "DEDUP_LOOKBACK", timedelta(seconds=24))],
    ),
]
