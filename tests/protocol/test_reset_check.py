"""The post-reset check: each probe reports what it still sees, and nothing when all is gone."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.exec_reset import Call, Witnesses, reset_leftovers
from conformance.adapters.factory import open_reference
from conformance.driver import Capability, Description, Driver, DriverError, ErrorCode
from conformance.protocol import messages as m
from conformance.wire.serve import invoke


def described(*capabilities: Capability) -> Description:
    return Description(name="sample", version="1", capabilities=list(capabilities))


BOTH = described(Capability.OFFICE, Capability.WORK_REQUESTS)


@pytest.fixture
def driver(tmp_path: Path) -> Iterator[Driver]:
    opened = open_reference(None, tmp_path)
    try:
        yield opened
    finally:
        opened.close()


def calling(driver: Driver) -> Call:
    """Requests answered by an in-process driver, as the served reference would answer them."""

    def call(operation: m.Operation[Any, Any], args: m.Args) -> Any:
        return invoke(driver, m.Request(seq=1, operation=operation, args=args))

    return call


def test_an_empty_implementation_shows_nothing_even_for_named_witnesses(driver: Driver) -> None:
    witnesses = Witnesses(task_id="t", membership=("env", "alice"))
    assert reset_leftovers(calling(driver), BOTH, witnesses) == []


@pytest.mark.parametrize(
    ("create", "witnesses", "finding"),
    [
        (
            lambda d: (d.create_workspace("w"), d.create_task("w", "t")),
            Witnesses(task_id="t"),
            "get_task still finds task 't'",
        ),
        (
            lambda d: d.create_environment("env", ["alice"]),
            Witnesses(membership=("env", "alice")),
            "list_requests still finds environment 'env'",
        ),
    ],
)
def test_each_witness_that_still_resolves_is_named(
    driver: Driver, create: Callable[[Driver], object], witnesses: Witnesses, finding: str
) -> None:
    create(driver)
    assert reset_leftovers(calling(driver), BOTH, witnesses) == [finding]


def test_a_probe_refused_for_another_reason_than_not_found_is_a_finding(driver: Driver) -> None:
    def call(operation: m.Operation[Any, Any], args: m.Args) -> Any:
        if operation is m.GET_TASK:
            raise DriverError(ErrorCode.INTERNAL, "disk on fire", definite=False)
        return calling(driver)(operation, args)

    found = reset_leftovers(call, BOTH, Witnesses(task_id="t"))
    assert found == ["get_task failed: internal: disk on fire"]


def test_unreadable_metrics_are_a_finding_and_only_declared_capabilities_are_probed() -> None:
    asked: list[str] = []

    def call(operation: m.Operation[Any, Any], args: m.Args) -> Any:
        asked.append(operation.name)
        return "not {{ metrics" if operation is m.TELEMETRY else []

    found = reset_leftovers(
        call, described(Capability.OFFICE), Witnesses(membership=("env", "alice"))
    )
    assert asked == ["list_runs", "telemetry", "warning_logs"]
    assert len(found) == 1 and found[0].startswith("telemetry still shows unreadable metrics")
