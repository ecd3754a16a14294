"""What `conformance run` prints while the suite runs: a line per record that needs attention
(or, asked, per record), as the kit judged it.

pytest's own terminal output speaks of test items, not scenarios: node ids that are paths into
the kit's installation, SKIPPED where the kit says not_applicable, and a failure section of
raw tracebacks through pytest's fixtures and Hypothesis' whole report, printed before the
kit's account of the same failures. So the run silences pytest's per-item words and its
summary (`--tb=no --no-summary -qq`), and this plugin prints instead, for each record the
recorder writes that a person must read (a failure within the claim; every record with
`--progress=scenarios`), its status, criterion and scenario title: a failing run's first screen
is its failures, not two hundred passes. The account of each failure then comes once, after
the verdict tables (reports/terminal.py), and all of it stays in the stream.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING

import pytest

from conformance.running.options import Progress, options_of
from conformance.spec.registry import short_id
from conformance.stream.results import Attention, Claim, ScenarioResult, Status

if TYPE_CHECKING:
    from conformance.running.recorder import ResultsRecorder

PROGRESS_NAME = "conformance-progress"
COLLECTION_ERROR_LINES = 6
"""How much of a collection error's text is shown (the end of it says what failed)."""
_MARKUP: dict[Status, dict[str, bool]] = {
    Status.PASSED: {"green": True},
    Status.NOT_APPLICABLE: {"cyan": True},
    Status.XFAIL: {"yellow": True},
    Status.DIVERGED: {"yellow": True},
}


class KitProgress:
    """A pytest plugin: pytest's per-item letters and words silenced, the kit's lines printed."""

    def __init__(
        self,
        recorder: ResultsRecorder,
        write: Callable[[str, dict[str, bool]], None],
        *,
        progress: Progress,
    ) -> None:
        self._recorder = recorder
        self._write = write
        self._progress = progress
        self._lines: ProgressLines | None = None
        self._shown = 0

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """pytest-xdist's status line of its workers ("bringing up nodes...", in a `--jobs`
        run) is pytest's own words too: its controller is given no terminal to write them to
        (it writes them only where it has one)."""
        plugins = session.config.pluginmanager
        controller = plugins.get_plugin("dsession")
        if controller is not None:
            controller.terminal = None
            plugins.unregister(name="terminaldistreporter")

    @pytest.hookimpl(wrapper=True)
    def pytest_report_teststatus(
        self, report: pytest.TestReport
    ) -> Generator[None, tuple[str, str, str], tuple[str, str, str]]:
        """The category pytest counts by, with no letter and no word: it prints nothing."""
        category, _letter, _word = yield
        return category, "", ""

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        """The records the recorder made, or a `--jobs` worker handed home, for the item just
        finished (one per criterion for a property check)."""
        records = self._recorder.seen()
        if self._lines is None:
            self._lines = ProgressLines(self._progress, self._recorder.run().header.claim)
        for record in records[self._shown :]:
            line = self._lines.line_for(record)
            if line is not None:
                self._write(line, _MARKUP.get(record.shown_status, {"red": True}))
        self._shown = len(records)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A module of the kit that cannot be collected: the end of pytest's account of why,
        since its own error section is silenced (quiet or not: no verdict would say it)."""
        if not report.failed:
            return
        text = [line for line in report.longreprtext.splitlines() if line.strip()]
        self._write(f"could not collect {report.nodeid or 'the suite'}:", {"red": True})
        for line in text[-COLLECTION_ERROR_LINES:]:
            self._write(f"  {line}", {})


class ProgressLines:
    """Which records get a line as they are written: every one (`scenarios`), or those a person
    must read (`problems`, see `Attention`); a property that ended in what no check judged gets
    one line, under its own title, however many criteria it names."""

    def __init__(self, progress: Progress, claim: Claim) -> None:
        self._progress = progress
        self._attention = Attention(claim)

    def line_for(self, record: ScenarioResult) -> str | None:
        if self._progress not in (Progress.SCENARIOS, Progress.PROBLEMS):
            return None
        wanted = self._attention.wants(record)
        if record.ended is not None or self._progress is Progress.PROBLEMS:
            return progress_line(record) if wanted else None
        return progress_line(record)


def progress_line(record: ScenarioResult) -> str:
    """`failed  OFFICE-001.2  office_assign_rate_001.feature: Five agent wakes ...`: no path,
    the outline row's values in the title."""
    criterion = short_id(record.criterion) if record.criterion else "(no criterion)"
    criterion = "(the property)" if record.ended else criterion
    line = f"{record.shown_status.value:<14} {criterion:<15} {record.feature}: {record.shown_title}"
    if record.status is Status.NOT_APPLICABLE and record.evidence:
        line += f" ({record.evidence.splitlines()[0]})"
    return line


def register(config: pytest.Config, recorder: ResultsRecorder) -> None:
    """Put the kit's lines in place of pytest's, as `--progress` asks (pytest's: nothing
    done). pytest's terminal reporter may not be registered yet: it is looked up per line."""
    progress = options_of(config).progress
    if progress is Progress.PYTEST:
        return

    def write(line: str, markup: dict[str, bool]) -> None:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(line, **markup)

    plugin = KitProgress(recorder, write, progress=progress)
    config.pluginmanager.register(plugin, PROGRESS_NAME)
