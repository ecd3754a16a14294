"""The office properties' schedules themselves: their checks judge windows over stored instants,
which assumes a clock that never goes back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.adapters.factory import open_driver
from conformance.driver import Capability
from conformance.properties.rolling_window import Office, schedules


@pytest.fixture(scope="module")
def office(tmp_path_factory: pytest.TempPathFactory) -> Office:
    """The reference's constants, which the schedules adapt to."""
    driver = open_driver("reference", None, tmp_path_factory.mktemp("describe"))
    try:
        description = driver.describe()
    finally:
        driver.close()
    assert description.office is not None
    return Office(description.office, Capability.RESTART in description.capabilities)


@given(data=st.data())
def test_a_schedule_never_goes_back_in_time(office: Office, data: st.DataObject) -> None:
    instants = [wake.at for wake in data.draw(schedules(office, 15), label="schedule")]
    assert instants == sorted(instants), f"a schedule goes back in time: {instants}"
