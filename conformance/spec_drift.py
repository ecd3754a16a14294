"""Spec drift: how the criteria in source spec files differ from the registry.

A criterion whose source text changed keeps its scenarios but marks them
"needs review" until its new hash is accepted into the registry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from conformance.inventory import ScenarioEntry
from conformance.registry import REGISTRY_PATH, Registry
from conformance.spec_text import SourceCriterion, read_criteria


class SpecDriftError(Exception):
    """A spec file the registry does not know, or an --accept that cannot be applied."""


@dataclass
class Drift:
    new: list[str] = field(default_factory=list)
    removed: list[tuple[str, int]] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    uncovered_new: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.new or self.removed or self.changed)


def expand_spec_paths(paths: Iterable[Path], registry: Registry) -> list[Path]:
    """Folders stand for the registry's source files found in them; files stand for themselves."""
    sources = sorted({criterion.source for criterion in registry.criteria})
    expanded: list[Path] = []
    for path in paths:
        if path.is_dir():
            expanded.extend(path / name for name in sources if (path / name).is_file())
        else:
            expanded.append(path)
    return expanded


def read_spec_files(paths: Iterable[Path], registry: Registry) -> dict[str, list[SourceCriterion]]:
    """The criteria of each file, keyed by the registry source it stands for (its file name)."""
    known_sources = {criterion.source for criterion in registry.criteria}
    found: dict[str, list[SourceCriterion]] = {}
    for path in paths:
        if path.name not in known_sources:
            raise SpecDriftError(
                f"{path}: not a source the registry knows (expected one of {sorted(known_sources)})"
            )
        found[path.name] = read_criteria(path)
    return found


def check_drift(paths: Iterable[Path], registry: Registry, inventory: list[ScenarioEntry]) -> Drift:
    drift = Drift()
    recorded = {criterion.id: criterion for criterion in registry.criteria}
    for source, criteria in read_spec_files(paths, registry).items():
        current = {criterion.criterion_id: criterion for criterion in criteria}
        for criterion_id, criterion in current.items():
            if criterion_id not in recorded:
                drift.new.append(criterion_id)
                if not _scenarios_of(criterion_id, inventory):
                    drift.uncovered_new.append(criterion_id)
            elif recorded[criterion_id].source_hash != criterion.text_hash:
                drift.changed.append(criterion_id)
        for criterion_id, entry in recorded.items():
            if entry.source == source and criterion_id not in current:
                drift.removed.append((criterion_id, len(_scenarios_of(criterion_id, inventory))))
    return drift


def accept(
    criterion_ids: Iterable[str],
    paths: Iterable[Path],
    registry: Registry,
    registry_path: Path = REGISTRY_PATH,
) -> list[str]:
    """Record the current source hash of each named criterion in the registry file."""
    current = {
        criterion.criterion_id: criterion
        for criteria in read_spec_files(paths, registry).values()
        for criterion in criteria
    }
    text = registry_path.read_text(encoding="utf-8")
    accepted: list[str] = []
    for criterion_id in criterion_ids:
        if criterion_id not in current:
            raise SpecDriftError(f"{criterion_id} is not defined in the given spec files")
        pattern = re.compile(
            rf'(\[\[criterion\]\]\nid = "{re.escape(criterion_id)}"\n(?:[^\[\n][^\n]*\n)*?'
            rf'source_hash = )"[^"]*"'
        )
        text, count = pattern.subn(rf'\g<1>"{current[criterion_id].text_hash}"', text)
        if count != 1:
            raise SpecDriftError(
                f"{criterion_id} has no registry entry to update; add it to {registry_path} "
                "with a statement in our own words first"
            )
        accepted.append(criterion_id)
    registry_path.write_text(text, encoding="utf-8")
    return accepted


def _scenarios_of(criterion_id: str, inventory: list[ScenarioEntry]) -> list[ScenarioEntry]:
    return [entry for entry in inventory if criterion_id in entry.criteria]
