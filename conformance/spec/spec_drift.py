"""Spec drift: how the criteria and clauses in source spec files differ from the registry.

A criterion whose source text changed keeps its scenarios but marks them
"needs review" until its new hash is accepted into the registry. A clause
whose source span changed, or whose locator no longer finds its span, is
flagged the same way, clause by clause.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from conformance.spec.registry import CLAUSE_ID, REGISTRY_PATH, Registry
from conformance.spec.scenario_keys import ScenarioEntry
from conformance.spec.spec_text import (
    SourceCriterion,
    SpanError,
    read_criteria,
    read_span,
    text_hash,
)


class SpecDriftError(Exception):
    """A spec file the registry does not know, or an --accept that cannot be applied."""


@dataclass
class Drift:
    new: list[str] = field(default_factory=list)
    removed: list[tuple[str, int]] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    uncovered_new: list[str] = field(default_factory=list)
    changed_clauses: list[str] = field(default_factory=list)
    lost_clauses: list[tuple[str, str]] = field(default_factory=list)
    """Clauses whose locator finds no span any more, with why."""

    @property
    def clean(self) -> bool:
        return not (
            self.new or self.removed or self.changed or self.changed_clauses or self.lost_clauses
        )


def known_sources(registry: Registry) -> set[str]:
    """Every file the registry's criteria and clause spans come from."""
    return {c.source for c in registry.criteria} | {c.span.file for c in registry.clauses}


def expand_spec_paths(paths: Iterable[Path], registry: Registry) -> list[Path]:
    """Folders stand for the registry's source files found in them; files stand for themselves."""
    sources = sorted(known_sources(registry))
    expanded: list[Path] = []
    for path in paths:
        if path.is_dir():
            expanded.extend(path / name for name in sources if (path / name).is_file())
        else:
            expanded.append(path)
    return expanded


def read_spec_files(paths: Iterable[Path], registry: Registry) -> dict[str, list[SourceCriterion]]:
    """The criteria of each file, keyed by the registry source it stands for (its file name)."""
    sources = known_sources(registry)
    found: dict[str, list[SourceCriterion]] = {}
    for path in paths:
        if path.name not in sources:
            raise SpecDriftError(
                f"{path}: not a source the registry knows (expected one of {sorted(sources)})"
            )
        found[path.name] = read_criteria(path)
    return found


def span_texts(paths: Iterable[Path], registry: Registry) -> dict[str, str | SpanError]:
    """The source words of every clause whose file is among `paths`, or why they are lost."""
    by_name = {path.name: path for path in paths}
    texts: dict[str, str | SpanError] = {}
    for clause in registry.clauses:
        path = by_name.get(clause.span.file)
        if path is None:
            continue
        try:
            texts[clause.id] = read_span(path, clause.span)
        except SpanError as error:
            texts[clause.id] = error
    return texts


def quote_clauses(paths: Iterable[Path], registry: Registry) -> dict[str, str]:
    """Clause ID -> the spec's own words, for reports, from spec files the user gave."""
    return {
        clause_id: text
        for clause_id, text in span_texts(expand_spec_paths(paths, registry), registry).items()
        if isinstance(text, str)
    }


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
    for clause_id, text in span_texts(paths, registry).items():
        if isinstance(text, SpanError):
            drift.lost_clauses.append((clause_id, str(text)))
        elif text_hash(text) != registry.clause(clause_id).span_hash:
            drift.changed_clauses.append(clause_id)
    return drift


def accept(
    ids: Iterable[str],
    paths: Iterable[Path],
    registry: Registry,
    registry_path: Path = REGISTRY_PATH,
) -> list[str]:
    """Record the current source hash of each named criterion or clause in the registry file."""
    paths = list(paths)
    current = {
        criterion.criterion_id: criterion.text_hash
        for criteria in read_spec_files(paths, registry).values()
        for criterion in criteria
    }
    spans = span_texts(paths, registry)
    text = registry_path.read_text(encoding="utf-8")
    accepted: list[str] = []
    for item_id in ids:
        if CLAUSE_ID.fullmatch(item_id):
            text = _accept_clause(text, item_id, spans)
        else:
            text = _accept_criterion(text, item_id, current, registry_path)
        accepted.append(item_id)
    registry_path.write_text(text, encoding="utf-8")
    return accepted


def _accept_criterion(
    text: str, criterion_id: str, current: dict[str, str], registry_path: Path
) -> str:
    if criterion_id not in current:
        raise SpecDriftError(f"{criterion_id} is not defined in the given spec files")
    pattern = re.compile(
        rf'(\[\[criterion\]\]\nid = "{re.escape(criterion_id)}"\n(?:[^\[\n][^\n]*\n)*?'
        rf'source_hash = )"[^"]*"'
    )
    text, count = pattern.subn(rf'\g<1>"{current[criterion_id]}"', text)
    if count != 1:
        raise SpecDriftError(
            f"{criterion_id} has no registry entry to update; add it to {registry_path} "
            "with a statement in our own words first"
        )
    return text


def _accept_clause(text: str, clause_id: str, spans: dict[str, str | SpanError]) -> str:
    span = spans.get(clause_id)
    if span is None:
        raise SpecDriftError(f"{clause_id}: no clause of that ID has its source among the files")
    if isinstance(span, SpanError):
        raise SpecDriftError(f"{clause_id}: {span}; correct its locator first")
    pattern = re.compile(
        rf'(  id = "{re.escape(clause_id)}"\n(?:  [^\[\n][^\n]*\n)*?  span_hash = )"[^"]*"'
    )
    text, count = pattern.subn(rf'\g<1>"{text_hash(span)}"', text)
    if count != 1:
        raise SpecDriftError(f"{clause_id} has no span_hash line to update in the registry")
    return text


def _scenarios_of(criterion_id: str, inventory: list[ScenarioEntry]) -> list[ScenarioEntry]:
    return [entry for entry in inventory if criterion_id in entry.criteria]
