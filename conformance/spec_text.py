"""Reads acceptance criteria out of source specification files, for hashing and drift checks.

Two source shapes are understood: a bulleted criterion list (the Office
requirements, as plain text or Markdown, one criterion per bullet) and a
Markdown table whose first column is the criterion ID (the work-request
criteria table).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

_ID = r"AC-[A-Z]+(?:-[A-Z]+)*-\d{3}\.\d+"
_BULLET = re.compile(
    rf"^\s*(?:[•*-]|\d+\.)\s+\**`?(?P<id>{_ID})`?\**\s*[:—-]\s*\**\s*(?P<text>.+)$"
)
_TABLE_ROW = re.compile(rf"^\|\s*`?(?P<id>{_ID})`?\s*\|(?P<rest>.*)\|\s*$")


@dataclass(frozen=True)
class SourceCriterion:
    criterion_id: str
    text: str

    @property
    def text_hash(self) -> str:
        return text_hash(self.text)


def text_hash(text: str) -> str:
    """A hash of a criterion's text that ignores whitespace layout only."""
    normalised = " ".join(text.split())
    return "sha256:" + hashlib.sha256(normalised.encode("utf-8")).hexdigest()


def read_criteria(path: Path) -> list[SourceCriterion]:
    """Every criterion defined in the file, in file order (an ID defined twice is an error)."""
    found: dict[str, SourceCriterion] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        criterion = _parse_line(line)
        if criterion is None:
            continue
        if criterion.criterion_id in found:
            raise ValueError(f"{path}: criterion {criterion.criterion_id} is defined twice")
        found[criterion.criterion_id] = criterion
    return list(found.values())


def _parse_line(line: str) -> SourceCriterion | None:
    if bullet := _BULLET.match(line):
        return SourceCriterion(bullet["id"], bullet["text"].strip())
    if row := _TABLE_ROW.match(line):
        cells = [cell.strip() for cell in row["rest"].split("|")]
        return SourceCriterion(row["id"], " | ".join(cells))
    return None
