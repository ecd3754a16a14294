"""The verdict of `conformance run` comes from what the harness holds, never from a file.

The results stream on disk is for people and later reports; the harness does
not read it back to decide. An implementation (or anything else running as the
same user) could replace that file, so the run's exit code and every report it
writes come from the recorder's own records, held in memory. Those records are
cross-checked against pytest's own outcome of every scenario: a record saying
`passed` for a scenario pytest saw fail (or the other way round) makes the run
fail, whatever the cause.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, Final

import pytest

from conformance.stream.results import ResultsRun, ScenarioResult, Status

if TYPE_CHECKING:
    from conformance.running.recorder import ResultsRecorder

RECORDER_NAME: Final = "conformance-results"

#: What pytest may have seen of a scenario for each status the recorder gives it.
_AGREEING: Final[dict[Status, frozenset[str]]] = {
    Status.PASSED: frozenset({"passed"}),
    Status.XPASS: frozenset({"passed"}),
    Status.NOT_APPLICABLE: frozenset({"skipped"}),
    Status.FAILED: frozenset({"failed"}),
    Status.XFAIL: frozenset({"failed"}),
    Status.DIVERGED: frozenset({"failed"}),
    Status.TIMEOUT: frozenset({"failed"}),
    Status.ERRORED: frozenset({"failed", "skipped"}),
    Status.UNDEFINED: frozenset({"failed", "skipped"}),
}


class HarnessMemory:
    """A pytest plugin for the CLI's run: keeps pytest's outcome of every item and, at the end
    of the session, the recorder's run."""

    def __init__(self) -> None:
        self.outcomes: dict[str, str] = defaultdict(lambda: "passed")
        self.keys_by_nodeid: dict[str, list[str]] = {}
        self.run: ResultsRun | None = None
        self.fault: str | None = None
        """Why the run has no verdict of its own (a `--jobs` worker died): exit code 4."""
        self._recorder: ResultsRecorder | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object | None) -> None:
        """A worker that ended without finishing its session left the run without the records
        of what it was running."""
        if error is not None:
            self._faulted(f"worker {node.gateway.id} ended without finishing: {error}")

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport) -> None:
        self._faulted(f"a worker ended while running {crashitem}")

    def _faulted(self, said: str) -> None:
        self.fault = said if self.fault is None else f"{self.fault}; {said}"

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """An item's outcome is its worst phase's: failed over skipped over passed."""
        if report.failed:
            self.outcomes[report.nodeid] = "failed"
        elif report.skipped and self.outcomes[report.nodeid] != "failed":
            self.outcomes[report.nodeid] = "skipped"

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        recorder = session.config.pluginmanager.get_plugin(RECORDER_NAME)
        if recorder is not None:
            self._recorder = recorder
            self.run = recorder.run()
            self.keys_by_nodeid = dict(recorder.keys_by_nodeid)

    def stream_altered(self) -> bool:
        return self._recorder is not None and self._recorder.stream_altered()

    def restore_stream(self) -> None:
        if self._recorder is not None:
            self._recorder.restore_stream()

    def disagreements(self) -> list[str]:
        """Scenarios whose record says otherwise than pytest's own outcome."""
        if self.run is None:
            return []
        records = self.run.by_key()
        found = []
        for nodeid, outcome in sorted(self.outcomes.items()):
            keys = self.keys_by_nodeid.get(nodeid, [])  # none: not a scenario
            siblings = {records[key].status for key in keys if key in records}
            for key in keys:
                record = records.get(key)
                if record is None:
                    found.append(
                        f"{key}: pytest ran it ({outcome}) but the harness holds no record"
                    )
                elif not _agrees(outcome, record, siblings if len(keys) > 1 else set()):
                    found.append(f"{key}: recorded {record.status.value}, pytest saw it {outcome}")
        return found


def _agrees(outcome: str, record: ScenarioResult, siblings: set[Status]) -> bool:
    """A property's records (`siblings`, one per criterion it names) for the criteria its
    counterexample did not break pass (their checks held) or are not applicable (none ran)
    while pytest saw it fail, provided the failure shows on a sibling or as the search's fault
    (`ended`): a failing property whose every record passed would be a false pass (see
    properties.catalogue.fanned_status)."""
    status = record.status
    if siblings and outcome == "failed":
        shown = bool(siblings & {Status.FAILED, Status.DIVERGED, Status.XFAIL}) or bool(
            record.ended
        )
        if status in (Status.NOT_APPLICABLE, Status.PASSED, Status.XPASS) and shown:
            return True
    return outcome in _AGREEING[status]
