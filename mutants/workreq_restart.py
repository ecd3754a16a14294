"""Mutants of durability: lease facts that live in the coordinator's memory and die with it."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import update

from conformance.adapters.patched import Capability, Patch
from conformance.mutants.mutant import Mutant
from conformance.reference import app
from conformance.reference.clock import Clock
from conformance.reference.db import Database
from conformance.reference.workreq.models import State, WorkRequestRecord
from conformance.reference.workreq.service import WorkRequestService
from conformance.reference.workreq.settings import SETTINGS, WorkRequestSettings
from conformance.reference.workreq.views import LeaseView


class ForgetfulLeaseService(WorkRequestService):
    """Holds leases in memory only: on start, every in-progress request is open and unleased."""

    def __init__(
        self, db: Database, clock: Clock, settings: WorkRequestSettings = SETTINGS
    ) -> None:
        super().__init__(db, clock, settings)
        with db.transaction() as tx:
            tx.execute(
                update(WorkRequestRecord)
                .where(WorkRequestRecord.state == State.IN_PROGRESS)
                .values(
                    lease_holder=None,
                    lease_generation=0,
                    lease_expires_at=None,
                    state=State.OPEN,
                )
            )


class MemoryGenerationService(WorkRequestService):
    """Numbers claims from a counter held in memory, which starts again at zero on restart."""

    def __init__(
        self, db: Database, clock: Clock, settings: WorkRequestSettings = SETTINGS
    ) -> None:
        super().__init__(db, clock, settings)
        self._generations: dict[str, int] = {}

    def claim(self, request_id: str, holder: str) -> LeaseView:
        granted = super().claim(request_id, holder)
        generation = self._generations.get(request_id, 0) + 1
        self._generations[request_id] = generation
        with self._db.transaction() as tx:
            tx.execute(
                update(WorkRequestRecord)
                .where(WorkRequestRecord.request_id == request_id)
                .values(lease_generation=generation)
            )
        return replace(granted, generation=generation)


MUTANTS = [
    Mutant(
        "lease_lost_on_restart",
        "AC-ARMONIA-WORKREQ-001.3",
        Capability.WORK_REQUESTS,
        "keeps leases in memory: after a restart every in-progress request is open at generation 0",
        lambda: [Patch(app, "WorkRequestService", ForgetfulLeaseService)],
    ),
    Mutant(
        "generation_reset_on_restart",
        "AC-ARMONIA-WORKREQ-001.3",
        Capability.WORK_REQUESTS,
        "counts generations in memory, so the first claim after a restart gets generation 1 again",
        lambda: [Patch(app, "WorkRequestService", MemoryGenerationService)],
    ),
]
