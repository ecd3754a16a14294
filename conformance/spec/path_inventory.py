"""The inventory of paths: which paths each observable effect of either spec arises on.

The data lives in `conformance/data/paths.toml`, which also says which paths each scenario takes
(`[scenarios]`). What a scenario checks there is read from a run's evidence (`walked_pairs`), and
the office effects model's share is measured at the `ci` budget, not declared (see
`conformance.properties.office_path_coverage`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final, Protocol

from conformance.spec.evidence import Tally, merged_tallies

PATHS_FILE: Final = Path(__file__).resolve().parents[1] / "data" / "paths.toml"

Pair = tuple[str, str]
"""A clause and a path it must be checked on."""


@dataclass(frozen=True)
class Effect:
    id: str
    clause: str
    paths: tuple[str, ...]


@cache
def _data() -> dict[str, Any]:
    return tomllib.loads(PATHS_FILE.read_text(encoding="utf-8"))


def effects() -> tuple[Effect, ...]:
    return tuple(
        Effect(entry["id"], entry["clause"], tuple(entry["paths"])) for entry in _data()["effect"]
    )


def required_pairs() -> set[Pair]:
    return {(effect.clause, path) for effect in effects() for path in effect.paths}


def known_paths() -> set[str]:
    return {path for effect in effects() for path in effect.paths}


@dataclass(frozen=True)
class Taken:
    """A path a scenario takes: from its first step, or from the first step that begins with
    `since` (a restart, a lease running out, the call under test), so that checks made before it
    do not count as made on it."""

    path: str
    since: str | None = None


def scenario_paths() -> dict[str, tuple[Taken, ...]]:
    """The paths each scenario takes, by `<feature file>::<scenario name>` (an outline's row by
    its title, its placeholders filled, where its rows take different paths)."""
    return {
        key: tuple(_taken(path) for path in paths)
        for key, paths in _data().get("scenarios", {}).items()
    }


def _taken(entry: str | dict[str, str]) -> Taken:
    return Taken(entry) if isinstance(entry, str) else Taken(entry["path"], entry["from"])


class Step(Protocol):
    @property
    def keyword(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def checks(self) -> Mapping[str, Tally]: ...


class Walked(Protocol):
    """What a scenario's record says of where it went and what held (a results-stream record)."""

    @property
    def feature(self) -> str: ...
    @property
    def scenario(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def steps(self) -> Sequence[Step]: ...


def walked_pairs(records: Iterable[Walked]) -> set[Pair]:
    """(clause, path) for every clause a check held, and none broke, in a scenario of a run on
    a path it takes: what the run walked, not what a tag promised."""
    taken = scenario_paths()
    pairs: set[Pair] = set()
    for record in records:
        paths = taken.get(f"{record.feature}::{record.scenario}") or taken.get(
            f"{record.feature}::{record.title}", ()
        )
        for path in paths:
            checks = checks_since(record, path.since)
            held = [cite for cite, tally in checks.items() if tally.held and not tally.broken]
            pairs |= {(cite, path.path) for cite in held}
    return pairs


def checks_since(record: Walked, since: str | None) -> dict[str, Tally]:
    """The evidence the steps' checks left from the first step that begins with `since` (its
    keyword and text, as the feature writes them) on, or from the first; none where no step
    does. Only what a check judged: not the held a passing scenario's tags add to its record."""
    steps = record.steps
    if since is None:
        return merged_tallies(step.checks for step in steps)
    first = next(
        (i for i, s in enumerate(steps) if f"{s.keyword} {s.text}".startswith(since)), None
    )
    if first is None:
        return {}
    return merged_tallies(step.checks for step in steps[first:])
