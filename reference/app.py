"""The coordinator: one process's view of the store, with both capabilities."""

from __future__ import annotations

from conformance.reference.clock import Clock
from conformance.reference.db import Database
from conformance.reference.office.gate import CountReadFault
from conformance.reference.office.service import OfficeService
from conformance.reference.schema import create_schema
from conformance.reference.workreq.service import WorkRequestService


class Coordinator:
    """Everything held here is in memory and lost on restart; the store is not."""

    def __init__(
        self,
        url: str,
        clock: Clock,
        *,
        own_engines: bool = False,
        count_fault: CountReadFault | None = None,
    ) -> None:
        """`own_engines` and a shared `count_fault`: for a coordinator that stands in for
        another process of one deployment, whose count-read fault hook is the deployment's."""
        self.db = Database(url, own_engines=own_engines)
        create_schema(self.db.engine)
        self.office = OfficeService(self.db, clock, count_fault or CountReadFault())
        self.work_requests = WorkRequestService(self.db, clock)

    def close(self) -> None:
        self.db.dispose()
