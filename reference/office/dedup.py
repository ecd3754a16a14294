"""Stage 1 of the pipeline: is this keyed wake a redelivery of a recent one?"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from conformance.reference.office.constants import DEDUP_LOOKBACK
from conformance.reference.office.models import Run
from conformance.reference.office.wake import Wake


def recent_duplicate(session: Session, wake: Wake, now: datetime) -> Run | None:
    """The run carrying the wake's key, requested within (now - lookback, now]; keyless: None."""
    if wake.dedup_key is None:
        return None
    return session.scalars(
        select(Run).where(
            Run.dedup_key == wake.dedup_key,
            Run.requested_at > now - DEDUP_LOOKBACK,
            Run.requested_at <= now,
        )
    ).first()
