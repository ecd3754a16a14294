"""Every test starts with no parked or spare implementation process, and leaves none."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.adapters.exec_pool import PARK
from conformance.adapters.exec_spares import SPARES


@pytest.fixture(autouse=True)
def no_parked_processes() -> Iterator[None]:
    PARK.shut_down()
    SPARES.shut_down()
    yield
    PARK.shut_down()
    SPARES.shut_down()
