"""The inventory of paths: which paths each observable office effect arises on.

The data lives in `conformance/data/paths.toml`, which also says which path each scenario takes
(`[scenarios]`); what it checks there is its `@clause:` tags. The office effects model's share
is measured, not declared (see `conformance.properties.office_path_coverage`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from conformance.spec.registry import CLAUSE_TAG_PREFIX
from conformance.spec.scenario_keys import ScenarioEntry

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


def beyond_the_model() -> set[str]:
    """Paths the office effects model's schedules never take, each with its reason in the
    file: only scenarios check them."""
    return set(_data().get("model", {}).get("beyond", []))


def required_pairs() -> set[Pair]:
    return {(effect.clause, path) for effect in effects() for path in effect.paths}


def known_paths() -> set[str]:
    return {path for effect in effects() for path in effect.paths}


def scenario_paths() -> dict[str, tuple[str, ...]]:
    """The paths each scenario takes, by `<feature file>::<scenario name>`."""
    return {key: tuple(paths) for key, paths in _data().get("scenarios", {}).items()}


def scenario_name(entry: ScenarioEntry) -> str:
    """How `[scenarios]` names a scenario: an outline by its name, whatever its row."""
    return f"{entry.feature_file}::{entry.name}"


def tagged_pairs(entries: Iterable[ScenarioEntry]) -> set[Pair]:
    """(clause, path) for every scenario's `@clause:` tags crossed with the paths it takes."""
    taken = scenario_paths()
    pairs: set[Pair] = set()
    for entry in entries:
        if not entry.criteria:
            continue
        clauses = [
            t.removeprefix(CLAUSE_TAG_PREFIX) for t in entry.tags if t.startswith(CLAUSE_TAG_PREFIX)
        ]
        paths = taken.get(scenario_name(entry), ())
        pairs |= {(f"{entry.criteria[0]}/{clause}", path) for clause in clauses for path in paths}
    return pairs
