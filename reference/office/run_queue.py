"""The enqueue pipeline: duplicate lookup, coalescing, allowance gate, insert, in that order.

The order is the contract: a redelivered or coalescible wake is decided by the
earlier stages and never reaches the gate, so it is neither refused nor counted.
The pipeline runs in a transaction of its own, apart from whatever produced the wake.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session

from conformance.reference.clock import Clock
from conformance.reference.db import Database
from conformance.reference.office.coalescer import coalesce
from conformance.reference.office.constants import QUEUED
from conformance.reference.office.dedup import recent_duplicate
from conformance.reference.office.gate import AllowanceGate, CountUnavailable, GateVerdict
from conformance.reference.office.models import Run
from conformance.reference.office.telemetry import DedupKind, OfficeTelemetry
from conformance.reference.office.wake import EnqueueResult, Outcome, Wake

logger = logging.getLogger("reference.office")


class RunQueue:
    def __init__(
        self, db: Database, clock: Clock, telemetry: OfficeTelemetry, gate: AllowanceGate
    ) -> None:
        self._db = db
        self._clock = clock
        self._telemetry = telemetry
        self._gate = gate

    def enqueue(self, wake: Wake) -> EnqueueResult:
        """Decide the wake's fate; a database failure is reported as `none`, never raised."""
        now = self._clock.now()
        try:
            return self._run_pipeline(wake, now)
        except IntegrityError:
            holder = self._run_holding_key(wake.dedup_key)
            if holder is None:
                logger.exception("enqueue failed: integrity error without a duplicate key")
                return EnqueueResult(Outcome.NONE)
            self._telemetry.deduplicated(wake.reason, DedupKind.DURABLE)
            return EnqueueResult(Outcome.DEDUPLICATED, holder)
        except SQLAlchemyError:
            logger.exception("enqueue failed")
            return EnqueueResult(Outcome.NONE)

    def _run_pipeline(self, wake: Wake, now: datetime) -> EnqueueResult:
        """One transaction, or two when the gate could not read its count (`CountUnavailable`)."""
        try:
            with self._db.transaction() as session:
                return self._decide(session, wake, now, self._gate.admits)
        except CountUnavailable as failure:
            with self._db.transaction() as session:
                return self._decide(session, wake, now, self._gate.unread_verdict(failure))

    def _decide(
        self, session: Session, wake: Wake, now: datetime, gate: GateVerdict
    ) -> EnqueueResult:
        duplicate = recent_duplicate(session, wake, now)
        if duplicate is not None:
            self._telemetry.deduplicated(wake.reason, DedupKind.WINDOWED)
            return EnqueueResult(Outcome.DEDUPLICATED, str(duplicate.id))
        merged = coalesce(session, wake, now)
        if merged is not None:
            return EnqueueResult(Outcome.COALESCED, str(merged.id))
        if not gate(session, wake, now):
            return EnqueueResult(Outcome.RATE_LIMITED)
        return EnqueueResult(Outcome.QUEUED, str(_insert(session, wake, now).id))

    def _run_holding_key(self, dedup_key: str | None) -> str | None:
        """The id of the run already holding the key the durable unique index refused."""
        if dedup_key is None:
            return None
        with self._db.transaction() as session:
            run_id = session.scalar(select(Run.id).where(Run.dedup_key == dedup_key))
        return None if run_id is None else str(run_id)


def _insert(session: Session, wake: Wake, now: datetime) -> Run:
    """Flushed at once, so that the durable unique index rules inside the pipeline."""
    run = Run(
        agent_id=wake.agent_id,
        reason=wake.reason,
        dedup_key=wake.dedup_key,
        requested_at=now,
        status=QUEUED,
        coalesced_count=0,
    )
    run.write_payload(wake.payload, wake.facts)
    session.add(run)
    session.flush()
    return run
