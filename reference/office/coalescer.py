"""Stage 2 of the pipeline: merge a wake into a queued run that has not started yet.

The match ignores actor type and the merge overwrites the payload, so merging
can move a row into or out of the allowance count: an accepted consequence.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from conformance.reference.office.constants import COALESCE_WINDOW, NO_COALESCE_KEY_PREFIX, QUEUED
from conformance.reference.office.models import Run
from conformance.reference.office.wake import Wake

MERGEABLE: tuple[str, ...] = (QUEUED,)
"""The run statuses a wake may merge into: a run that has not started."""


def coalesce(session: Session, wake: Wake, now: datetime) -> Run | None:
    """Merge into the newest matching queued run and return it; None when nothing matches."""
    target = _merge_target(session, wake, now)
    if target is not None:
        target.write_payload(wake.payload, wake.facts)
        target.coalesced_count = Run.coalesced_count + 1  # in SQL: no lost update
    return target


def _merge_target(session: Session, wake: Wake, now: datetime) -> Run | None:
    if wake.dedup_key is not None and wake.dedup_key.startswith(NO_COALESCE_KEY_PREFIX):
        return None
    return session.scalars(
        select(Run)
        .where(
            Run.agent_id == wake.agent_id,
            Run.reason == wake.reason,
            Run.task_key == wake.facts.task_key,
            Run.status.in_(MERGEABLE),
            Run.requested_at > now - COALESCE_WINDOW,
            Run.requested_at <= now,
        )
        .order_by(Run.requested_at.desc(), Run.id.desc())
        .limit(1)
    ).first()
