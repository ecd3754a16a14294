"""The operation set is the driver port, one to one."""

from __future__ import annotations

import inspect
import typing
from datetime import datetime

import pytest
from pydantic import ValidationError

from conformance.driver import Driver, OfficeVocabulary
from conformance.protocol import messages as m

PROCESS_LIFECYCLE = {"restart", "close", "crash_during"}
"""Acted out on the process (kill and relaunch; kill; kill in the middle of a batch), never
sent as operations of their own."""
ANSWERED_BY_HANDSHAKE = "describe"
PROTOCOL_ONLY = {m.HANDSHAKE.name, m.RESET.name}
"""Operations without a port method: they act on the process between scenarios."""


def port_methods() -> dict[str, typing.Callable[..., object]]:
    return {
        name: member
        for name, member in inspect.getmembers(Driver, inspect.isfunction)
        if not name.startswith("_")
    }


def test_every_port_method_but_the_lifecycle_ones_is_an_operation() -> None:
    expected = set(port_methods()) - PROCESS_LIFECYCLE - {ANSWERED_BY_HANDSHAKE}
    assert set(m.OPERATIONS) == expected | PROTOCOL_ONLY


def test_each_operation_takes_the_port_methods_parameters_and_returns_its_type() -> None:
    for name, method in port_methods().items():
        if name in PROCESS_LIFECYCLE or name == ANSWERED_BY_HANDSHAKE:
            continue
        operation = m.OPERATIONS[name]
        parameters = [p for p in inspect.signature(method).parameters if p != "self"]
        if name == "advance_clock":
            parameters = [
                "delta_microseconds"
            ]  # a timedelta goes on the wire as whole microseconds
        hints = typing.get_type_hints(method)
        assert list(operation.args.model_fields) == parameters, name
        assert operation.result == hints["return"], name


def test_the_handshake_carries_the_description() -> None:
    assert (
        m.HandshakeResult.model_fields["description"].annotation
        is typing.get_type_hints(Driver.describe)["return"]
    )
    assert m.ADVANCE_CLOCK.result is datetime


@pytest.mark.parametrize(
    "vocabulary",
    [
        {"reasons": {"allowance_exhausted": "x", "count_read_failed": "x"}},
        {"reasons": {"task_unattributed": ""}},
        {"dedup_counters": []},
        {"dedup_counters": ["office_assignment_rate_limit_total"]},
        {"reason_label": ""},
    ],
    ids=["reasons-collide", "empty-reason", "no-dedup-counter", "counter-reused", "no-label"],
)
def test_a_vocabulary_the_checks_could_not_read_is_refused(vocabulary: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        OfficeVocabulary.model_validate(vocabulary)


def test_a_declared_vocabulary_with_its_own_names_is_accepted() -> None:
    declared = OfficeVocabulary.model_validate(
        {"rate_limit_counter": "wake_throttle_total", "dedup_counters": ["runs_merged_total"]}
    )
    assert declared.dedup_counters == ["runs_merged_total"]
