"""What a bench run produces: rows of side-by-side measures, their ratios, and the run's context.

Every row compares a baseline with a subject measured in the same run, so
that the ratio survives a noisy, shared machine better than either figure.
The ratio is always a cost ratio: above 1 means the subject costs more (takes
longer, or gets fewer done per second) than the baseline.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Measure:
    label: str
    value: float | None
    """None when the measure could not be taken; the row's note says why."""
    unit: str

    @property
    def is_rate(self) -> bool:
        """Rates ("/s") are better when higher; times are better when lower."""
        return self.unit.endswith("/s")


@dataclass(frozen=True)
class Row:
    key: str
    """Stable identifier, used to match rows across runs."""
    section: str
    what: str
    baseline: Measure
    subject: Measure | None = None
    target: float | None = None
    """The highest acceptable cost ratio, when the brief sets one."""
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """Subject's cost relative to the baseline's; None when either is missing or zero."""
        if self.subject is None or self.baseline.value is None or self.subject.value is None:
            return None
        base, subject = self.baseline.value, self.subject.value
        if self.baseline.is_rate:
            return base / subject if subject else None
        return subject / base if base else None

    @property
    def verdict(self) -> str:
        """met, missed, or empty when the row has no target or no ratio."""
        if self.target is None or self.ratio is None:
            return ""
        return "met" if self.ratio <= self.target else "missed"


@dataclass
class Report:
    meta: dict[str, Any]
    rows: list[Row] = field(default_factory=list)

    def add(self, rows: list[Row]) -> None:
        self.rows.extend(rows)

    def to_json(self) -> dict[str, Any]:
        rows = [{**asdict(row), "ratio": row.ratio, "verdict": row.verdict} for row in self.rows]
        return {"format": FORMAT_VERSION, "meta": self.meta, "rows": rows}

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")


def read_report(path: Path) -> Report:
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != FORMAT_VERSION:
        raise ValueError(f"{path}: not a bench report of format {FORMAT_VERSION}")
    return Report(meta=data["meta"], rows=[_row(raw) for raw in data["rows"]])


def _row(raw: dict[str, Any]) -> Row:
    subject = raw.get("subject")
    return Row(
        key=raw["key"],
        section=raw["section"],
        what=raw["what"],
        baseline=Measure(**raw["baseline"]),
        subject=Measure(**subject) if subject else None,
        target=raw.get("target"),
        note=raw.get("note", ""),
    )
