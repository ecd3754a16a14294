"""`conformance run --jobs N`: the suite spread over N pytest-xdist workers, one stream.

pytest-xdist runs the items and carries each item's reports home to the controller; the kit
carries what it adds on those same reports (`user_properties`, which xdist serialises): a
worker's recorder puts the keys an item will record on its setup report and the records it
made on its teardown report, and the fault budget puts an implementation's fault on the report
that met it. The controller's recorder alone writes the run's stream, from those records, in
the inventory's order; its fault budget counts every worker's faults and stops the run past the
budget, as `--maxfail` counts every worker's failures. A worker writes no stream of the run and
never sees the run's stream or key (see `SuiteOptions.for_worker`). A worker that dies leaves
the run without the records of what it was running: xdist is told never to replace one, and
the run is a fault of the harness (exit code 4, see `HarnessMemory`).

Every worker collects the same items (xdist checks it) in the same order: the property checks,
each one long search that cannot be split, heaviest first (their catalogued weights), interleaved
with the scenarios from the front of the collection, so that xdist's first two items for each
worker hold one search and no worker is left with a long search at the end while the others
idle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

import pytest

from conformance.adapters.exec_spares import end_every_process
from conformance.properties.catalogue import check_of_item

T = TypeVar("T")
KEYS: Final = "conformance-keys"
RECORDS: Final = "conformance-records"
FAULT: Final = "conformance-fault"


def xdist_arguments(count: int) -> list[str]:
    """pytest's arguments that spread a run over `count` workers: xdist's load scheduling, one
    item at a time after the first two, and no replacement for a worker that dies."""
    return [
        *("-p", "xdist"),
        *("--numprocesses", str(count)),
        *("--dist", "load"),
        *("--maxschedchunk", "1"),
        *("--max-worker-restart", "0"),
    ]


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def worker_id(config: pytest.Config) -> str:
    workerinput: dict[str, Any] = getattr(config, "workerinput", {})
    return str(workerinput.get("workerid", "worker"))


def is_controller(config: pytest.Config) -> bool:
    """Whether this process runs no item itself but gathers the workers' reports."""
    return config.pluginmanager.has_plugin("dsession")


def hand_home(report: pytest.TestReport, name: str, value: object) -> None:
    """Put `value` (JSON-like) on a report, for the controller to take from it."""
    report.user_properties.append((name, value))


def carried(report: pytest.TestReport, name: str) -> list[Any]:
    """What the report carries under `name`, in the order it was put there."""
    return [value for key, value in report.user_properties if key == name]


def interleaved(items: Sequence[T], weight_of: Callable[[T], float | None]) -> list[T]:
    """The items as a worker runs them: the property checks (`weight_of` an item: its check's
    weight, None for a scenario), heaviest first, each followed by one scenario, then the other
    scenarios in the collection's order."""
    checks = sorted(
        (item for item in items if weight_of(item) is not None), key=_heaviest(weight_of)
    )
    rest = [item for item in items if weight_of(item) is None]
    ordered: list[T] = []
    for index, check in enumerate(checks):
        ordered += [check, *rest[index : index + 1]]
    return ordered + rest[len(checks) :]


def _heaviest(weight_of: Callable[[T], float | None]) -> Callable[[T], float]:
    return lambda item: -(weight_of(item) or 0.0)


def check_weight(item: pytest.Item) -> float | None:
    check = check_of_item(item)
    return None if check is None else check.weight


class Worker:
    """A worker's own plugin: its items in the order above, and every implementation process it
    started ended when its session ends (a run of one job ends them in `suite_run`)."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        items[:] = interleaved(items, check_weight)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        end_every_process()


def stop_every_worker(config: pytest.Config, reason: str) -> None:
    """Hand out no more items (the controller's): the workers finish what they hold and end."""
    controller = config.pluginmanager.get_plugin("dsession")
    if controller is not None and not controller.shouldstop:
        controller.shouldstop = reason
