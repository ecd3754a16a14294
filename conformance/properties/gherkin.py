"""Writing Gherkin steps: the property checks' counterexamples read like the feature files."""

from __future__ import annotations

from datetime import datetime
from typing import Final

SCENARIO_NOTE: Final = "Counterexample as a scenario (paste it into a feature file):\n"
"""How a property notes its counterexample as Gherkin (Hypothesis keeps the shrunk one's)."""
CRITERION_PLACEHOLDER: Final = "CRITERION"
"""A noted scenario's tag before its failure names the criterion it broke."""
RESTART_STEP: Final = "the implementation restarts"
"""The one step that restarts the implementation (steps/common.py binds it)."""


class Steps:
    """Appends steps to `lines`, writing `And` for a keyword that repeats the one before."""

    def __init__(self, lines: list[str], last: str = "") -> None:
        self._lines = lines
        self.last = last

    def add(self, keyword: str, text: str) -> None:
        shown = "And" if keyword == self.last else keyword
        self.last = keyword
        self._lines.append(f"  {shown} {text}")

    def table(self, header: tuple[str, str], rows: dict[str, str]) -> None:
        """A data table under the step before, as the features indent theirs."""
        self._lines += [f"      | {key} | {value} |" for key, value in [header, *rows.items()]]


def instant_text(at: datetime) -> str:
    """An instant as the features write it: ISO 8601, UTC as `Z`."""
    return at.isoformat().replace("+00:00", "Z")
