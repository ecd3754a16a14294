"""Every test starts with no parked implementation process or park store, and leaves none."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.adapters.exec_pool import PARK


@pytest.fixture(autouse=True)
def no_parked_processes() -> Iterator[None]:
    PARK.shut_down()
    yield
    PARK.shut_down()
