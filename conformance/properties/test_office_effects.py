"""The office effects property: every operation of a drawn schedule shows what the model says.

See `office_effects` for what is checked after each operation, `office_operations` for what a
schedule holds, and `office_model` for the predictions and the clauses they rest on.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.applicability import not_applicable
from conformance.driver import Capability, Description, Driver, OfficeConstants, Producer
from conformance.properties import RESTARTS_PER_EXAMPLE, Budget
from conformance.properties.office_effects import OfficeEffects
from conformance.properties.office_model import OF4_COUNTED, OfficeModel
from conformance.properties.office_operations import Powers, effect_schedules
from conformance.spec.clause_check import port_value

if TYPE_CHECKING:
    from conformance.properties import Drivers

START = datetime(2026, 2, 2, 8, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def description(drivers: Drivers) -> Description:
    with drivers.fresh() as driver:
        described = driver.describe()
    if Capability.OFFICE not in described.capabilities or described.office is None:
        not_applicable("the implementation does not declare office")
    return described


def constants_of(description: Description) -> OfficeConstants:
    return port_value(description.office, "office is declared, but no Office constants reported")


def powers_of(description: Description) -> Powers:
    office = constants_of(description)
    declared = set(description.capabilities)
    actorless = tuple(p for p in office.producers if p != Producer.ASSIGNEE_MUTATION.value)
    return Powers(
        keyless=Capability.HOOK_KEYLESS_ASSIGNMENT in declared,
        degraded=Capability.HOOK_COUNT_READ_FAILURE in declared,
        concurrent=Capability.CONCURRENCY in declared,
        restartable=Capability.RESTART in declared,
        producers=tuple(p for p in actorless if p in {x.value for x in Producer}),
        allowance=office.allowance,
        window=timedelta(seconds=office.window_seconds),
    )


def effects_of(driver: Driver, description: Description) -> OfficeEffects:
    """The checks on an empty store: the model by the constants and the OF-4 reading the
    implementation declares, the counter read by its vocabulary."""
    powers, office = powers_of(description), constants_of(description)
    model = OfficeModel(
        powers.allowance,
        powers.window,
        description.reading_of("OF-4") == OF4_COUNTED,
        coalesce_window=timedelta(seconds=office.coalesce_window_seconds),
        lookback=timedelta(seconds=office.dedup_lookback_seconds),
    )
    return OfficeEffects(driver, model, office.vocabulary)


@given(data=st.data())
def test_every_operation_shows_what_the_model_says(
    drivers: Drivers, description: Description, budget: Budget, data: st.DataObject
) -> None:
    powers = powers_of(description)
    schedule = data.draw(
        effect_schedules(powers, START, 14, RESTARTS_PER_EXAMPLE[budget]), label="schedule"
    )
    with drivers.fresh() as driver:
        effects = effects_of(driver, description)
        with effects.kept_as_scenario():
            effects.prepare()
            for operation in schedule:
                effects.perform(operation)
