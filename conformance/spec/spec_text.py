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


# --------------------------------------------------------------------------
# Clause spans: a few sentences of one passage of a source file
# --------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"“(])")
_BULLET_MARK = re.compile(r"^\s*(?:[•*-]|\d+\.)\s+")
_CRITERION_ANCHOR = re.compile(rf"^{_ID}$")


class SpanError(ValueError):
    """A locator that names no passage of its source file."""


@dataclass(frozen=True)
class SpanLocator:
    """Where a clause's words are in its source file, without quoting them.

    `anchor` is a criterion ID (its bullet or table row), `<heading>#<n>` (the
    n-th non-empty line after the line that reads exactly `<heading>`), or a
    line lead such as `Scope` (the line that starts `Scope — `). `sentences`
    is the first and last sentence of the passage the clause covers, from 1.
    """

    file: str
    anchor: str
    sentences: tuple[int, int]

    def __str__(self) -> str:
        first, last = self.sentences
        which = f"sentence {first}" if first == last else f"sentences {first}-{last}"
        return f"{self.file}, {self.anchor}, {which}"


def sentences_of(text: str) -> list[str]:
    """A passage cut into sentences: a stop, then a space, then a capital or a quote."""
    return [part.strip() for part in _SENTENCE_END.split(" ".join(text.split())) if part.strip()]


def read_span(path: Path, locator: SpanLocator) -> str:
    """The source words a locator points at, whitespace normalised."""
    lines = path.read_text(encoding="utf-8").splitlines()
    passage = _passage(lines, locator.anchor, path)
    parts = sentences_of(passage)
    first, last = locator.sentences
    if not 1 <= first <= last <= len(parts):
        raise SpanError(
            f"{path.name}: {locator.anchor} has {len(parts)} sentence(s); "
            f"the locator asks for {first} to {last}"
        )
    return " ".join(parts[first - 1 : last])


def _passage(lines: list[str], anchor: str, path: Path) -> str:
    if _CRITERION_ANCHOR.match(anchor):
        for line in lines:
            criterion = _parse_line(line)
            if criterion is not None and criterion.criterion_id == anchor:
                return criterion.text
        raise SpanError(f"{path.name}: no criterion {anchor}")
    heading, _, number = anchor.partition("#")
    if number:
        return _nth_after_heading(lines, heading, int(number), path)
    for line in lines:
        if line.startswith(f"{anchor} — "):
            return line.removeprefix(f"{anchor} — ")
    raise SpanError(f"{path.name}: no line starts with {anchor!r}")


def _nth_after_heading(lines: list[str], heading: str, number: int, path: Path) -> str:
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == heading)
    except StopIteration:
        raise SpanError(f"{path.name}: no heading {heading!r}") from None
    blocks = [line for line in lines[start + 1 :] if line.strip()]
    if not 1 <= number <= len(blocks):
        raise SpanError(f"{path.name}: {heading!r} has no passage {number}")
    return _BULLET_MARK.sub("", blocks[number - 1]).strip()
