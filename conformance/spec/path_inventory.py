"""The inventory of paths: which paths each observable office effect arises on.

The data lives in `conformance/data/paths.toml`, which also says which paths each scenario takes
(`[scenarios]`). What a scenario checks there is read from a run's evidence (`walked_pairs`), and
the office effects model's share is measured at the `ci` budget, not declared (see
`conformance.properties.office_path_coverage`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final, Protocol

from conformance.spec.evidence import Tally

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


def scenario_paths() -> dict[str, tuple[str, ...]]:
    """The paths each scenario takes, by `<feature file>::<scenario name>` (an outline's row by
    its title, its placeholders filled, where its rows take different paths)."""
    return {key: tuple(paths) for key, paths in _data().get("scenarios", {}).items()}


class Walked(Protocol):
    """What a scenario's record says of where it went and what held (a results-stream record)."""

    @property
    def feature(self) -> str: ...
    @property
    def scenario(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def checks(self) -> Mapping[str, Tally]: ...


def walked_pairs(records: Iterable[Walked]) -> set[Pair]:
    """(clause, path) for every clause a check held, and none broke, in a scenario of a run,
    crossed with the paths that scenario takes: what the run walked, not what a tag promised."""
    taken = scenario_paths()
    pairs: set[Pair] = set()
    for record in records:
        paths = taken.get(f"{record.feature}::{record.scenario}") or taken.get(
            f"{record.feature}::{record.title}", ()
        )
        held = [cite for cite, tally in record.checks.items() if tally.held and not tally.broken]
        pairs |= {(cite, path) for cite in held for path in paths}
    return pairs
