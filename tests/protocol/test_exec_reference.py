"""The exec adapter against the served reference: the wire loses nothing.

The same script of operations runs in-process and through `python -m
conformance.wire.serve`; every result and every typed error must be identical,
including across a restart (a SIGKILL and a relaunch on the same store).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.exec_adapter import ExecDriver
from conformance.adapters.factory import ConfigurationError, open_driver
from conformance.driver import (
    Capability,
    DelegationKind,
    Driver,
    DriverError,
    ErrorCode,
    Permissions,
    Producer,
)
from tests.process_exit import outlives

SERVE = [sys.executable, "-m", "conformance.wire.serve"]
Observation = tuple[str, str]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ExecDriver]:
    driver = ExecDriver(SERVE, tmp_path / "served")
    try:
        yield driver
    finally:
        driver.close()


@pytest.fixture
def in_process(tmp_path: Path) -> Iterator[Driver]:
    (tmp_path / "in-process").mkdir()
    driver = open_driver("reference", None, tmp_path / "in-process")
    try:
        yield driver
    finally:
        driver.close()


def observe(driver: Driver) -> list[Observation]:
    """Exercise every operation, and restart midway; record what each one answered.

    The ids the implementation chooses for work requests and child sessions are
    random, so they are replaced by placeholders before comparing.
    """
    seen: list[tuple[str, Any]] = []

    def step(name: str, *args: Any, **kwargs: Any) -> None:
        try:
            seen.append((name, getattr(driver, name)(*args, **kwargs)))
        except DriverError as error:
            seen.append((name, (error.code, error.definite, error.message)))

    full = Permissions(tools=frozenset({"shell", "browser"}), devices=frozenset({"gpu"}))
    step("set_clock", datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    step("create_workspace", "w")
    step("create_agent", "w", "boss", can_assign_tasks=True)
    step("create_agent", "w", "dev", can_assign_tasks=False)
    step("create_task", "w", "t", assignee_agent_id="dev")
    step("open_office_session", "dev", "t")
    step("assign_task", "t", "boss", acting_agent_id="boss")
    step("assign_task", "t", "boss", acting_agent_id="dev")
    step("assign_task_keyless", "t", "dev", acting_agent_id="")
    step("advance_clock", timedelta(seconds=6, microseconds=7))
    step("produce_wake", Producer.ONBOARDING, "t", "dev")
    step(
        "enqueue_wake",
        "dev",
        "task_assigned",
        '{"actor_type": "agent", "task_id": 42}',
        dedup_key=None,
    )
    step("enqueue_wake", "dev", "task_assigned", "{not json", dedup_key="k-1")
    step("fail_next_count_read")
    step("get_task", "missing")
    step("create_environment", "env", ["alice", "bob"])
    step("create_campaign", "camp", "env", 100)
    step("create_session", "root", "camp", "alice", full)
    step(
        "delegate",
        DelegationKind.SPAWN,
        "root",
        deliverable="a report",
        acceptance_checks=["cites sources"],
        budget_slice=40,
        permissions=Permissions(tools=frozenset({"shell"})),
        assignee="bob",
    )
    request_id = seen[-1][1].request_id
    child_session = seen[-1][1].child_session_id
    step("claim", request_id, "alice")
    step("claim", request_id, "bob")
    step("heartbeat", request_id, "bob", 1)
    step("record_usage", child_session, 5)
    step("record_usage", child_session, 500)
    step("restart")
    step("advance_clock", timedelta(0))
    step("list_runs")
    step("telemetry")
    step("warning_logs")
    step("mutation_effects")
    step("get_task", "t")
    step("publish", request_id, "bob", 1, "s3://out")
    step("publish", request_id, "bob", 1, "s3://out")
    step("get_request", request_id)
    step("list_requests", "env", "alice")
    step("list_requests", "env", "mallory")
    step("budget", "camp")
    step("set_run_status", "1", "finished")
    step("delete_run", "1")
    step("delete_run", "1")
    step("list_runs")
    chosen = {request_id: "<request>", child_session: "<child session>"}
    return [(name, _with_placeholders(repr(answer), chosen)) for name, answer in seen]


def _with_placeholders(text: str, chosen: dict[str, str]) -> str:
    for identifier, placeholder in chosen.items():
        text = text.replace(identifier, placeholder)
    return text


def test_the_served_reference_answers_exactly_like_the_in_process_one(
    served: ExecDriver, in_process: Driver
) -> None:
    over_the_wire, direct = observe(served), observe(in_process)
    for wire, local in zip(over_the_wire, direct, strict=True):
        assert wire == local
    assert ("get_task", repr((ErrorCode.NOT_FOUND, True, "unknown task 'missing'"))) in direct
    assert any(name == "warning_logs" and "allowance" in logs for name, logs in direct)


def test_the_handshake_describes_the_reference_with_what_serving_adds(
    served: ExecDriver, in_process: Driver
) -> None:
    local = in_process.describe()
    wire_only = [Capability.PRELAUNCH, Capability.MULTIPROCESS, Capability.RESET]
    assert not set(wire_only) & set(local.capabilities)
    served_capabilities = [*local.capabilities, *wire_only]
    assert served.describe() == local.model_copy(update={"capabilities": served_capabilities})


def test_a_restart_kills_the_process_keeps_the_store_and_resets_the_clock(
    served: ExecDriver,
) -> None:
    served.set_clock(datetime(2026, 5, 1, tzinfo=UTC))
    served.create_workspace("w")
    later = served.advance_clock(timedelta(minutes=3))
    before = served._process.pid
    served.restart()
    assert served._process.pid != before and not outlives(before)
    assert served.advance_clock(timedelta(0)) == later
    with pytest.raises(DriverError) as duplicate:
        served.create_workspace("w")
    assert duplicate.value.code is ErrorCode.INVALID_INPUT


def test_each_store_directory_is_a_fresh_store(tmp_path: Path) -> None:
    first = ExecDriver(SERVE, tmp_path / "one")
    second = ExecDriver(SERVE, tmp_path / "two")
    try:
        first.create_workspace("w")
        first.create_agent("w", "a", can_assign_tasks=False)
        with pytest.raises(DriverError) as unknown:
            second.create_agent("w", "a", can_assign_tasks=False)
        assert unknown.value.code is ErrorCode.NOT_FOUND
    finally:
        first.close()
        second.close()


def test_close_leaves_no_process_behind(tmp_path: Path) -> None:
    driver = ExecDriver(SERVE, tmp_path / "store")
    pid = driver._process.pid
    driver.close()
    assert not outlives(pid)


def test_the_factory_opens_exec_implementations(tmp_path: Path) -> None:
    driver = open_driver(f"exec:{sys.executable} -m conformance.wire.serve", None, tmp_path)
    try:
        assert isinstance(driver, ExecDriver)
        assert driver.describe().name == "reference"
    finally:
        driver.close()


@pytest.mark.parametrize(
    ("impl", "database", "complaint"),
    [
        ("exec:", None, "needs a command"),
        ("exec:   ", None, "needs a command"),
        ("exec:./impl", "sqlite:///x.db", "--database configures the in-process reference"),
    ],
)
def test_the_factory_refuses_a_bad_exec_setting(
    tmp_path: Path, impl: str, database: str | None, complaint: str
) -> None:
    with pytest.raises(ConfigurationError, match=complaint):
        open_driver(impl, database, tmp_path)


def test_the_request_timeout_can_be_set_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONFORMANCE_REQUEST_TIMEOUT", "2.5")
    driver = open_driver(f"exec:{sys.executable} -m conformance.wire.serve", None, tmp_path)
    try:
        assert isinstance(driver, ExecDriver) and driver.timeout == 2.5
    finally:
        driver.close()


@pytest.mark.parametrize("setting", ["soon", "-1", "0", "inf", "nan", "-inf"])
def test_a_request_timeout_that_is_no_finite_positive_number_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    monkeypatch.setenv("CONFORMANCE_REQUEST_TIMEOUT", setting)
    with pytest.raises(ConfigurationError, match="expected a finite number of seconds above 0"):
        open_driver(f"exec:{sys.executable} -m conformance.wire.serve", None, tmp_path)


def test_a_bare_conformance_command_is_found_beside_the_kit_when_not_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """exec:"conformance serve-reference" works from a virtual environment nobody activated."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    driver = open_driver("exec:conformance serve-reference", None, tmp_path)
    try:
        assert isinstance(driver, ExecDriver) and driver.command[0] == str(
            Path(sys.executable).with_name("conformance")
        )
        assert driver.describe().name == "reference"
    finally:
        driver.close()
