"""A suite session freezes what is alive once it has collected, and thaws it at its very end
(conformance.running.frozen_heap): no full collection walks the harness and the implementation's
modules again during the run, and a process that goes on after the session is not left frozen."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

FROZEN_DURING_THE_RUN = """
import gc

def test_the_heap_is_frozen_while_scenarios_run():
    assert gc.get_freeze_count() > 0
"""


def test_the_heap_is_frozen_during_the_session_and_thawed_after_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_frozen=FROZEN_DURING_THE_RUN)
    gc.unfreeze()  # whatever this worker's own session froze: the run below must freeze anew
    result = pytester.runpytest_inprocess("-p", "conformance.running.frozen_heap")
    result.assert_outcomes(passed=1)
    assert gc.get_freeze_count() == 0, "the session left the heap frozen"


def test_without_the_plugin_nothing_is_frozen(pytester: pytest.Pytester) -> None:
    """The check above can fail: a session without the plugin freezes nothing."""
    pytester.makepyfile(test_frozen=FROZEN_DURING_THE_RUN)
    gc.unfreeze()
    result = pytester.runpytest_inprocess("-p", "no:conformance.running.frozen_heap")
    result.assert_outcomes(failed=1)


def test_the_fork_server_warms_the_parsed_features_and_freezes_them() -> None:
    """What every forked run would otherwise parse again is parsed once in the server."""
    probe = (
        "import gc\n"
        "from pytest_bdd.feature import features\n"
        "from conformance.running.forked_suite import warm_up\n"
        "from conformance.inventory import _parsed\n"
        "from conformance.suite import FEATURES_DIR\n"
        "warm_up()\n"
        "files = {str(path) for path in FEATURES_DIR.glob('**/*.feature')}\n"
        "print(files <= set(features), _parsed.cache_info().currsize == len(files),"
        " gc.get_freeze_count() > 0)\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert finished.stdout.split() == ["True", "True", "True"], finished.stdout + finished.stderr


RECORD_AT_A_LATER_CLEANUP = """
import gc, os

def pytest_configure(config):
    def record():
        with open(os.environ["FREEZE_RECORD"], "w") as out:
            out.write(str(gc.get_freeze_count()))
    config.add_cleanup(record)
"""


def test_the_heap_thaws_after_every_other_cleanup(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytest's last collections run in its plugins' cleanups: the thaw must come after them
    all, or they walk the whole heap again. A cleanup any other plugin registers still finds the
    heap frozen."""
    record = pytester.path / "freeze-count"
    monkeypatch.setenv("FREEZE_RECORD", str(record))
    pytester.makeconftest(RECORD_AT_A_LATER_CLEANUP)
    pytester.makepyfile(test_frozen=FROZEN_DURING_THE_RUN)
    gc.unfreeze()
    result = pytester.runpytest_inprocess("-p", "conformance.running.frozen_heap")
    result.assert_outcomes(passed=1)
    assert int(record.read_text()) > 0, "the heap thawed before another plugin's cleanup"
    assert gc.get_freeze_count() == 0
