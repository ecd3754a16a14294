"""One worker of `conformance run --jobs N`: pytest over the suite, one item at a time as the
run hands them out (see `jobs`).

The worker is a process of its own, started by the run with the run's pytest arguments and
two pipe ends. It collects the whole suite (every worker collects the same items, and says
which, so that the run can check they agree), then asks the run for an item, runs it, hands
on the records the item wrote and asks again, until the run has none left. It starts, holds and
ends implementation processes of its own, and each scenario has its own store, as in a run of
one job. Its recorder writes a stream of its own share (no `undefined` records: only the run
knows what nobody ran), which nothing reads; the run writes the one stream from the records
handed on.

Messages, one JSON object a line. From the worker: `{"collected": [[nodeid, [keys]], ...],
"header": {...}}` once; `{"next": true}` to ask for an item; `{"ran": index, "records": [...],
"failed": bool, "faults": n, "stopped": reason}` after each; `{"end": {...}}` last (pytest's
exit code, the records pytest disagrees with, the footer's stop and integrity). From the run:
`{"item": index}`, or `{"item": null}` when there is none left.
"""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any, Final

import pytest

from conformance.running.harness_memory import RECORDER_NAME, HarnessMemory
from conformance.running.recorder import ResultsRecorder
from conformance.running.scenario_items import item_keys
from conformance.stream.results import ScenarioResult

WORKER_MODULE: Final = "conformance.running.jobs_worker"
FAULT_BUDGET_NAME: Final = "conformance-fault-budget"


class Channel:
    """The worker's end of its two pipes."""

    def __init__(self, incoming: IO[str], outgoing: IO[str]) -> None:
        self._in, self._out = incoming, outgoing

    def send(self, message: dict[str, Any]) -> None:
        self._out.write(json.dumps(message) + "\n")
        self._out.flush()

    def receive(self) -> dict[str, Any]:
        line = self._in.readline()
        if not line:
            raise EOFError("the run closed its end of the pipe")
        answer: dict[str, Any] = json.loads(line)
        return answer


class JobsWorker:
    """The pytest plugin of a worker: its items come from the run, one at a time."""

    def __init__(self, channel: Channel, memory: HarnessMemory) -> None:
        self._channel = channel
        self._memory = memory
        self._records: list[ScenarioResult] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Say what was collected. The restart forecast (restart_forecast) stays the one read
        in collection order: the scenarios are handed out in that order, so a worker's next
        few items lie among the next few collected, and the spares it keeps ready are about
        those it needs."""
        recorder = session.config.pluginmanager.get_plugin(RECORDER_NAME)
        header = None
        if isinstance(recorder, ResultsRecorder):
            recorder.fills_unrun = False
            recorder.on_record = self._records.append
            header = recorder.run().header.model_dump(mode="json")
        features_dir = session.config.rootpath / (
            session.config.getini("bdd_features_base_dir") or "features"
        )
        collected = [[item.nodeid, item_keys(item, features_dir)] for item in session.items]
        self._channel.send({"collected": collected, "header": header})

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        """pytest's own loop, except that the next item is the one the run hands out, and each
        item is torn down whole before the next (which may be any of them)."""
        if session.testsfailed and not session.config.option.continue_on_collection_errors:
            raise session.Interrupted(f"{session.testsfailed} error(s) during collection")
        if session.config.option.collectonly:
            return True
        index = self._next()
        while index is not None:
            item = session.items[index]
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=None)
            stopped = session.shouldfail or session.shouldstop
            self._channel.send(
                {
                    "ran": index,
                    "records": [record.model_dump(mode="json") for record in self._records],
                    "failed": self._memory.outcomes.get(item.nodeid) == "failed",
                    "faults": _faults(session.config),
                    "stopped": str(stopped) if stopped else None,
                }
            )
            self._records.clear()
            if stopped:
                break
            index = self._next()
        return True

    def _next(self) -> int | None:
        self._channel.send({"next": True})
        index = self._channel.receive().get("item")
        return index if isinstance(index, int) else None


def _faults(config: pytest.Config) -> int:
    budget = config.pluginmanager.get_plugin(FAULT_BUDGET_NAME)
    return int(getattr(budget, "faults", 0))


def main(argv: list[str]) -> int:
    """`python -m conformance.running.jobs_worker READ_FD,WRITE_FD PYTEST_ARGS...`."""
    from conformance.adapters.exec_pool import PARK
    from conformance.adapters.exec_spares import SPARES
    from conformance.adapters.process_tree import adopting_orphans, sweep_orphans

    read_fd, write_fd = (int(fd) for fd in argv[0].split(","))
    channel = Channel(
        os.fdopen(read_fd, "r", encoding="utf-8"), os.fdopen(write_fd, "w", encoding="utf-8")
    )
    memory = HarnessMemory()
    worker = JobsWorker(channel, memory)
    with adopting_orphans():
        code = int(pytest.main(argv[1:], plugins=[memory, worker]))
        PARK.kill_all()
        SPARES.shut_down()
        sweep_orphans()
    footer = memory.run.footer if memory.run is not None else None
    channel.send(
        {
            "end": {
                "exit": code,
                "recorded": memory.run is not None,
                "disagreements": memory.disagreements(),
                "stopped": footer.stopped if footer is not None else None,
                "integrity": footer.integrity if footer is not None else None,
            }
        }
    )
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
