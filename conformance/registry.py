"""The criteria registry: every acceptance criterion the kit pins, loaded from data.

The data lives in `conformance/data/criteria.toml`; this module only reads it.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CRITERION_TAG = re.compile(r"AC-(?:OFFICE-ASSIGN-RATE|ARMONIA-WORKREQ)-\d{3}\.\d+")
REGISTRY_PATH = Path(__file__).parent / "data" / "criteria.toml"


@dataclass(frozen=True)
class Requirement:
    id: str
    title: str
    source: str


@dataclass(frozen=True)
class Criterion:
    id: str
    requirement: str
    statement: str
    source: str
    source_hash: str


@dataclass(frozen=True)
class Interpretation:
    id: str
    criteria: tuple[str, ...]
    reading: str


@dataclass(frozen=True)
class Registry:
    requirements: tuple[Requirement, ...]
    criteria: tuple[Criterion, ...]
    interpretations: tuple[Interpretation, ...]

    def criterion(self, criterion_id: str) -> Criterion:
        for criterion in self.criteria:
            if criterion.id == criterion_id:
                return criterion
        raise KeyError(criterion_id)

    def ids(self) -> list[str]:
        return [criterion.id for criterion in self.criteria]

    def criteria_of(self, requirement_id: str) -> list[Criterion]:
        return [c for c in self.criteria if c.requirement == requirement_id]


def load_registry(path: Path = REGISTRY_PATH) -> Registry:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    registry = Registry(
        requirements=tuple(Requirement(**item) for item in data["requirement"]),
        criteria=tuple(Criterion(**item) for item in data["criterion"]),
        interpretations=tuple(
            Interpretation(item["id"], tuple(item["criteria"]), item["reading"])
            for item in data.get("interpretation", [])
        ),
    )
    _check_consistent(registry)
    return registry


@cache
def default_registry() -> Registry:
    return load_registry()


def _check_consistent(registry: Registry) -> None:
    """A registry that contradicts itself is a configuration error, caught at load time."""
    requirement_ids = {r.id for r in registry.requirements}
    criterion_ids = registry.ids()
    if len(set(criterion_ids)) != len(criterion_ids):
        raise ValueError("criteria registry lists a criterion ID twice")
    for criterion in registry.criteria:
        if not CRITERION_TAG.fullmatch(criterion.id):
            raise ValueError(f"criterion ID {criterion.id!r} does not have the expected form")
        if criterion.requirement not in requirement_ids:
            raise ValueError(f"{criterion.id} names unknown requirement {criterion.requirement}")
    for interpretation in registry.interpretations:
        unknown = set(interpretation.criteria) - set(criterion_ids)
        if unknown:
            raise ValueError(f"interpretation {interpretation.id} names unknown criteria {unknown}")
