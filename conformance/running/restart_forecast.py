"""How many restarts the scenarios about to run will ask for, read from their Gherkin.

Restarts cluster: a few feature files restart many times in a row, one
scenario up to five times in a few dozen milliseconds. A spare process (see
adapters/exec_spares) started at the previous restart is rarely ready by
then, so the restart waits for most of an interpreter's start-up. Knowing
the selected scenarios and their steps after collection, the plugin tells
each driver how many restarts its scenario and the next few will ask for,
and the exec adapter has that many spares starting ahead. The forecast only
moves when processes are launched: what a restart does, and every verdict,
stay the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import pytest

from conformance.properties.gherkin import RESTART_STEP
from conformance.running.scenario_items import scenario_template

LOOKAHEAD: Final = 8
"""Scenarios counted ahead: about half a second of the suite through exec, the time
one spare of the served reference takes to start on a busy 2-core machine."""


def restarts_in(item: pytest.Item) -> int:
    """Restart steps in an item's scenario, background included; 0 for other tests."""
    template = scenario_template(item)
    if template is None:
        return 0
    return sum(step.name == RESTART_STEP for step in template.steps)


class RestartForecast:
    """Restart counts of the selected items, in the order they will run."""

    def __init__(self, counts: Sequence[tuple[str, int]], lookahead: int = LOOKAHEAD) -> None:
        self._counts = [count for _, count in counts]
        self._positions = {node_id: index for index, (node_id, _) in enumerate(counts)}
        self._lookahead = lookahead

    @classmethod
    def of(cls, items: Sequence[pytest.Item]) -> RestartForecast:
        return cls([(item.nodeid, restarts_in(item)) for item in items])

    def ahead(self, node_id: str) -> int | None:
        """Restarts asked for by this item and the ones after it within the lookahead;
        None for an item the forecast does not know."""
        position = self._positions.get(node_id)
        if position is None:
            return None
        return sum(self._counts[position : position + self._lookahead])


FORECAST: Final = pytest.StashKey[RestartForecast]()
