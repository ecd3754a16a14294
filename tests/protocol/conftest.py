"""Every test starts with no parked implementation process, and leaves none behind."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.adapters.exec_pool import PARK


@pytest.fixture(autouse=True)
def no_parked_processes() -> Iterator[None]:
    PARK.kill_all()
    yield
    PARK.kill_all()
