"""Writing Gherkin steps: the property checks' counterexamples read like the feature files."""

from __future__ import annotations


class Steps:
    """Appends steps to `lines`, writing `And` for a keyword that repeats the one before."""

    def __init__(self, lines: list[str], last: str = "") -> None:
        self._lines = lines
        self.last = last

    def add(self, keyword: str, text: str) -> None:
        shown = "And" if keyword == self.last else keyword
        self.last = keyword
        self._lines.append(f"  {shown} {text}")
