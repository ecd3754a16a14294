"""Launching a restart's process ahead of time, for implementations declaring `prelaunch`.

The spare waits, imported and idle, with a store path that does not exist yet;
the restart kills the old process, links that path to the store and shakes
hands. The store must come through whole, the promise not to touch the store
before the handshake is checked, and the switch turns the whole thing off.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.adapters.exec_adapter import ExecDriver
from conformance.adapters.exec_spares import SPARES, SPARES_FOR_PEERS, SPARES_WITHOUT_FORECAST
from conformance.adapters.factory import ConfigurationError, open_driver
from conformance.adapters.faults import FaultKind, ImplementationFault
from conformance.driver import Capability
from conformance.protocol.messages import STORE_ENV

FAKES = Path(__file__).parent / "fakes"
SERVE = [sys.executable, "-m", "conformance.wire.serve"]
EARLY_STORE = [sys.executable, str(FAKES / "early_store.py")]


def store_seen_by(driver: ExecDriver) -> Path:
    """CONFORMANCE_STORE as the driver's current process was launched with it."""
    environ = Path(f"/proc/{driver._process.pid}/environ").read_bytes().split(b"\0")
    [value] = [
        entry.split(b"=", 1)[1]
        for entry in environ
        if entry.startswith(b"%s=" % STORE_ENV.encode())
    ]
    return Path(value.decode())


def test_the_served_reference_declares_prelaunch_and_keeps_off_the_store_until_greeted(
    tmp_path: Path,
) -> None:
    store = tmp_path / "absent"
    completed = subprocess.run(
        SERVE, input="", env={STORE_ENV: str(store), "PATH": ""}, capture_output=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    assert not store.exists(), "the store was touched with no handshake"
    driver = ExecDriver(SERVE, store)
    try:
        assert Capability.PRELAUNCH in driver.describe().capabilities
        assert store.is_dir()
    finally:
        driver.close()


@pytest.fixture
def two_spares_at_most(monkeypatch: pytest.MonkeyPatch) -> None:
    """A small room: every spare is an interpreter starting on the test machine."""
    monkeypatch.setattr(SPARES, "capacity", 2)


@pytest.mark.usefixtures("two_spares_at_most")
def test_with_no_forecast_restarts_after_the_first_take_over_spares_and_keep_the_store(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    driver = ExecDriver(SERVE, store, prelaunch=True)
    try:
        driver.create_workspace("w")
        driver.create_task("w", "t")
        assert SPARES.waiting() == [], "no spare before the run's first restart"
        driver.restart()
        assert store_seen_by(driver) == store, "the first restart launches as usual"
        assert len(SPARES.waiting()) == min(SPARES_WITHOUT_FORECAST, SPARES.capacity)
        seen = []
        for _ in range(2):
            before = driver._process.pid
            driver.restart()
            assert driver._process.pid != before
            seen.append(store_seen_by(driver))
            assert seen[-1].is_symlink() and seen[-1].resolve() == store.resolve()
            assert driver.get_task("t").task_id == "t", "the store did not come through"
        assert seen[0] != seen[1], "each restart takes a spare of its own"
    finally:
        driver.close()


@pytest.mark.usefixtures("two_spares_at_most")
def test_a_pool_s_peers_are_spares_on_the_same_store_and_the_room_stays_stocked(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    driver = ExecDriver(SERVE, store, prelaunch=True, restarts_ahead=0)
    peers = []
    try:
        driver.create_workspace("w")
        driver.create_task("w", "t")
        for _ in range(3):
            peers.append(driver.launch_peer())
            seen = store_seen_by(peers[-1])
            assert seen.is_symlink() and seen.resolve() == store.resolve(), "not a spare"
            assert peers[-1].get_task("t").task_id == "t", "the peer does not see the store"
            assert len(SPARES.waiting()) == SPARES_FOR_PEERS
        assert len({store_seen_by(peer) for peer in peers}) == 3, "each peer a spare of its own"
        peers[0].create_task("w", "u")
        assert driver.get_task("u").task_id == "u", "one store for all"
    finally:
        for peer in peers:
            peer.close()
        driver.close()


@pytest.mark.usefixtures("two_spares_at_most")
def test_a_forecast_starts_as_many_spares_as_restarts_are_expected_and_no_more(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    driver = ExecDriver(SERVE, store, prelaunch=True, restarts_ahead=3)
    try:
        driver.create_workspace("w")
        assert len(SPARES.waiting()) == 2, "three restarts expected, the room holds two"
        first = SPARES.waiting()[0].store_link
        driver.restart()
        assert store_seen_by(driver) == first, "the first restart takes a spare started at open"
        assert len(SPARES.waiting()) == 2, "two more restarts expected"
        driver.restart()
        assert len(SPARES.waiting()) == 1, "one more restart expected, one spare waits for it"
        driver.restart()
        assert SPARES.waiting() == []
        driver.restart()
        assert store_seen_by(driver) == store, "a restart nobody expected launches as usual"
        assert SPARES.waiting() == []
    finally:
        driver.close()


def test_a_forecast_of_no_restart_starts_no_spare(tmp_path: Path) -> None:
    driver = ExecDriver(SERVE, tmp_path / "store", prelaunch=True, restarts_ahead=0)
    try:
        assert SPARES.waiting() == []
    finally:
        driver.close()


def test_without_prelaunch_a_restart_launches_on_the_store_itself(tmp_path: Path) -> None:
    store = tmp_path / "store"
    driver = ExecDriver(SERVE, store, prelaunch=False, restarts_ahead=2)
    try:
        driver.create_workspace("w")
        for _ in range(2):
            driver.restart()
            assert store_seen_by(driver) == store
        assert SPARES.waiting() == []
    finally:
        driver.close()


@pytest.mark.usefixtures("two_spares_at_most")
def test_a_spare_that_created_its_store_early_is_an_unusable_fault(tmp_path: Path) -> None:
    driver = ExecDriver(EARLY_STORE, tmp_path / "store", prelaunch=True)
    try:
        driver.restart()
        spare = SPARES.waiting()[0]
        deadline = time.monotonic() + 30
        while not spare.store_link.exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # the fake breaks its promise as it starts: let it
        with pytest.raises(ImplementationFault) as raised:
            driver.restart()
        assert raised.value.kind is FaultKind.UNUSABLE
        assert "declares prelaunch, but created its store" in raised.value.message
    finally:
        driver.close()


@pytest.mark.parametrize(("setting", "prelaunch"), [(None, True), ("1", True), ("0", False)])
def test_the_factory_prelaunches_unless_told_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None, prelaunch: bool
) -> None:
    if setting is None:
        monkeypatch.delenv("CONFORMANCE_EXEC_PRELAUNCH", raising=False)
    else:
        monkeypatch.setenv("CONFORMANCE_EXEC_PRELAUNCH", setting)
    driver = open_driver(f"exec:{sys.executable} -m conformance.wire.serve", None, tmp_path)
    try:
        assert isinstance(driver, ExecDriver) and driver.prelaunch is prelaunch
    finally:
        driver.close()


def test_the_factory_refuses_an_unknown_prelaunch_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONFORMANCE_EXEC_PRELAUNCH", "yes")
    with pytest.raises(ConfigurationError, match="CONFORMANCE_EXEC_PRELAUNCH"):
        open_driver(f"exec:{sys.executable} -m conformance.wire.serve", None, tmp_path)
