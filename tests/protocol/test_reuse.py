"""Reusing one implementation process across scenarios: parked, reset, checked, never leaked.

With `reset` declared and reuse on, a closed driver parks its process and the
next driver of the same command resets it instead of launching. Nothing the
first scenario did may be visible to the second; a process that cannot be
reset is replaced by a fresh launch; one that pretends to reset is an
`unclean_reset` fault; and no parked process outlives the harness.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conformance.adapters.exec_adapter import CLOCK_START, ExecDriver
from conformance.adapters.exec_pool import MAX_PARKED_PER_COMMAND, PARK
from conformance.adapters.factory import ConfigurationError, open_driver
from conformance.adapters.faults import FaultKind, ImplementationFault
from conformance.driver import DelegationKind, DriverError, ErrorCode, Outcome, Permissions
from tests.process_exit import outlives

FAKES = Path(__file__).parent / "fakes"
SERVE = [sys.executable, "-m", "conformance.wire.serve"]
SHAM = [sys.executable, str(FAKES / "sham_reset.py")]
LINGERING = [sys.executable, str(FAKES / "lingering.py")]


def reusing(command: list[str], store: Path) -> ExecDriver:
    return ExecDriver(command, store, reuse=True)


def leave_state_everywhere(driver: ExecDriver) -> str:
    """A scenario leaving a run, a counter, a warning log, an armed hook, a task, a
    campaign, an environment and a claimed work request; the request's id."""
    driver.set_clock(datetime(2031, 6, 1, tzinfo=UTC))
    driver.create_workspace("w")
    driver.create_agent("w", "lead", can_assign_tasks=True)
    driver.create_agent("w", "dev", can_assign_tasks=False)
    driver.create_task("w", "t")
    driver.fail_next_count_read()
    driver.assign_task("t", "dev", acting_agent_id="lead")
    driver.fail_next_count_read()
    driver.create_environment("env", ["alice", "bob"])
    driver.create_campaign("camp", "env", 100)
    driver.create_session("root", "camp", "alice", Permissions(tools=frozenset({"shell"})))
    request = driver.delegate(
        DelegationKind.SPAWN,
        "root",
        deliverable="a report",
        acceptance_checks=[],
        budget_slice=10,
        permissions=Permissions(),
        assignee=None,
    )
    driver.claim(request.request_id, "bob")
    assert driver.list_runs() and driver.warning_logs()
    assert nonzero_counters(driver.telemetry()) == {"count_read_failed": 1.0}
    return request.request_id


def nonzero_counters(telemetry: str) -> dict[str, float]:
    """The non-zero samples of the rate-limit counter, by reason."""
    return {
        sample.labels["reason"]: sample.value
        for family in text_string_to_metric_families(telemetry)
        for sample in family.samples
        if sample.name == "office_assignment_rate_limit_total" and sample.value != 0
    }


def test_a_reset_process_shows_nothing_of_the_previous_scenario(tmp_path: Path) -> None:
    first = reusing(SERVE, tmp_path / "first")
    request_id = leave_state_everywhere(first)
    pid = first._process.pid
    first.close()

    second = reusing(SERVE, tmp_path / "second")
    try:
        assert second._process.pid == pid, "the parked process was not reused"
        assert second.store == tmp_path / "first"
        assert second.advance_clock(timedelta(0)) == CLOCK_START
        assert second.list_runs() == []
        assert second.warning_logs() == []
        assert nonzero_counters(second.telemetry()) == {}
        lookups = [
            lambda: second.get_task("t"),
            lambda: second.get_request(request_id),
            lambda: second.budget("camp"),
            lambda: second.list_requests("env", "alice"),
        ]
        for lookup in lookups:
            with pytest.raises(DriverError) as gone:
                lookup()
            assert gone.value.code is ErrorCode.NOT_FOUND

        second.create_workspace("w")
        second.create_agent("w", "lead", can_assign_tasks=True)
        second.create_agent("w", "dev", can_assign_tasks=False)
        second.create_task("w", "t")
        assigned = second.assign_task("t", "dev", acting_agent_id="lead")
        assert assigned.generation == 1
        assert assigned.wake is not None and assigned.wake.outcome is Outcome.QUEUED
        assert nonzero_counters(second.telemetry()) == {}, "the armed hook survived the reset"
        assert second.warning_logs() == []
        assert [run.requested_at for run in second.list_runs()] == [CLOCK_START]
    finally:
        second.close()


def test_a_reused_process_restarts_on_its_own_store(tmp_path: Path) -> None:
    reusing(SERVE, tmp_path / "first").close()
    second = reusing(SERVE, tmp_path / "second")
    try:
        second.create_workspace("w")
        second.restart()
        with pytest.raises(DriverError) as duplicate:
            second.create_workspace("w")
        assert duplicate.value.code is ErrorCode.INVALID_INPUT
        assert second.store == tmp_path / "first"
    finally:
        second.close()


def test_without_reuse_every_scenario_gets_a_fresh_process(tmp_path: Path) -> None:
    first = ExecDriver(SERVE, tmp_path / "first")
    pid = first._process.pid
    first.close()
    assert len(PARK) == 0 and not outlives(pid)


def test_a_process_that_faulted_is_never_parked(tmp_path: Path) -> None:
    driver = reusing(SERVE, tmp_path / "store")
    os.killpg(driver._process.pid, signal.SIGKILL)
    with pytest.raises(ImplementationFault) as caught:
        driver.telemetry()
    assert caught.value.kind is FaultKind.CRASH
    driver.close()
    assert len(PARK) == 0


def test_a_parked_process_that_died_is_replaced_by_a_fresh_launch(tmp_path: Path) -> None:
    first = reusing(SERVE, tmp_path / "first")
    pid = first._process.pid
    first.close()
    os.killpg(pid, signal.SIGKILL)
    second = reusing(SERVE, tmp_path / "second")
    try:
        assert second._process.pid != pid
        assert second.store == tmp_path / "second"
        assert second.list_runs() == []
    finally:
        second.close()


def test_a_parked_process_whose_store_was_removed_is_replaced(tmp_path: Path) -> None:
    first = reusing(SERVE, tmp_path / "first" / "store")
    pid = first._process.pid
    first.close()
    shutil.rmtree(tmp_path / "first")
    second = reusing(SERVE, tmp_path / "second")
    try:
        assert second._process.pid != pid and not outlives(pid)
        assert second.store == tmp_path / "second"
    finally:
        second.close()


def test_a_sham_reset_is_an_unclean_reset_fault_naming_what_survived(tmp_path: Path) -> None:
    first = reusing(SHAM, tmp_path / "first")
    leave_state_everywhere(first)
    pid = first._process.pid
    first.close()

    with pytest.raises(ImplementationFault) as caught:
        reusing(SHAM, tmp_path / "second")
    fault = caught.value
    assert fault.kind is FaultKind.UNCLEAN_RESET
    for finding in (
        "list_runs still shows 1 run(s)",
        'office_assignment_rate_limit_total{reason="count_read_failed"} 1',
        "warning_logs still shows 1 warning log(s)",
        "get_task still finds task 't'",
        "list_requests still finds environment 'env'",
        "CONFORMANCE_EXEC_REUSE=0",
    ):
        assert finding in fault.message
    assert not outlives(pid)

    third = reusing(SHAM, tmp_path / "third")
    try:
        assert third._process.pid != pid and third.list_runs() == []
    finally:
        third.close()


def test_only_the_same_command_takes_a_parked_process(tmp_path: Path) -> None:
    first = reusing(SERVE, tmp_path / "first")
    pid = first._process.pid
    first.close()
    other = reusing([*SERVE, "--validate"], tmp_path / "other")
    try:
        assert other._process.pid != pid and len(PARK) == 1
    finally:
        other.close()
    assert len(PARK) == 2


def test_only_a_few_processes_wait_per_command(tmp_path: Path) -> None:
    drivers = [reusing(SERVE, tmp_path / str(n)) for n in range(MAX_PARKED_PER_COMMAND + 1)]
    pids = [driver._process.pid for driver in drivers]
    for driver in drivers:
        driver.close()
    drivers[-1].close()  # a second close parks nothing twice
    assert len(PARK) == MAX_PARKED_PER_COMMAND
    assert not outlives(pids[-1])


def test_at_exit_parked_processes_their_children_and_their_stores_are_gone() -> None:
    script = (
        "from conformance.adapters.exec_adapter import ExecDriver\n"
        "from conformance.adapters.exec_pool import PARK\n"
        f"driver = ExecDriver({LINGERING!r}, None, reuse=True)\n"
        "child = (driver.store / 'child.pid').read_text()\n"
        "print(driver._process.pid, child, driver.store, flush=True)\n"
        "driver.close()\n"
        "assert len(PARK) == 1\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    implementation, child, store = done.stdout.split()
    assert not outlives(int(implementation))
    assert not outlives(int(child))
    assert not Path(store).exists()


@pytest.mark.parametrize(("setting", "reuse"), [(None, True), ("1", True), ("0", False)])
def test_the_factory_reuses_unless_told_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None, reuse: bool
) -> None:
    if setting is None:
        monkeypatch.delenv("CONFORMANCE_EXEC_REUSE", raising=False)
    else:
        monkeypatch.setenv("CONFORMANCE_EXEC_REUSE", setting)
    driver = open_driver(f"exec:{sys.executable} -m conformance.wire.serve", None, tmp_path)
    try:
        assert isinstance(driver, ExecDriver) and driver.reuse is reuse
        assert (driver.store == tmp_path / "store") is not reuse, "a reused store outlives scratch"
    finally:
        driver.close()
    assert len(PARK) == int(reuse)


def test_the_factory_refuses_an_unknown_reuse_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONFORMANCE_EXEC_REUSE", "yes")
    with pytest.raises(ConfigurationError, match="CONFORMANCE_EXEC_REUSE"):
        open_driver(f"exec:{sys.executable} -m conformance.wire.serve", None, tmp_path)
