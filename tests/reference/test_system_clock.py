"""In production the reference reads the wall clock; freezegun pins it to show where it is read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from freezegun import freeze_time

from conformance.reference.app import Coordinator
from conformance.reference.clock import SystemClock

FROZEN = datetime(2026, 5, 4, 10, 30, 15, 123456, tzinfo=UTC)


def test_the_system_clock_is_aware_utc_with_microseconds() -> None:
    with freeze_time(FROZEN):
        now = SystemClock().now()
    assert now == FROZEN
    assert now.tzinfo is UTC


def test_a_coordinator_on_the_wall_clock_stamps_runs_with_the_current_instant(
    tmp_path: Path,
) -> None:
    coordinator = Coordinator(f"sqlite:///{tmp_path / 'store.sqlite'}", SystemClock())
    office = coordinator.office
    try:
        office.create_workspace("w")
        office.create_agent("w", "ada", can_assign_tasks=True)
        office.create_task("w", "T")
        with freeze_time(FROZEN) as frozen:
            office.assign_task("T", "ada", "ada")
            frozen.tick(timedelta(minutes=10))
            office.assign_task("T", "ada", "ada")
        stamps = [run.requested_at for run in office.list_runs()]
    finally:
        coordinator.close()
    assert stamps == [FROZEN, FROZEN + timedelta(minutes=10)]
