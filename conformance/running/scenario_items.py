"""Which Gherkin scenario a collected pytest item runs, the keys of its records, and its tags.

pytest-bdd keeps this in a registry keyed by the test function; the registry
holds weak references, so an item without a function (a doctest, an item of
another plugin) must be asked about safely. One place for this lookup keeps
the kit's three readers of it (the recorder, the feature scope and the
restart forecast) on one footing with pytest-bdd's internals.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
from pytest_bdd.parser import ScenarioTemplate
from pytest_bdd.scenario import scenario_wrapper_template_registry
from pytest_bdd.utils import registry_get_safe

from conformance.properties.catalogue import check_of_item
from conformance.spec.registry import CLAUSE_TAG_PREFIX, INTERPRETATION_TAG_PREFIX
from conformance.spec.scenario_keys import scenario_key


def scenario_template(item: pytest.Item) -> ScenarioTemplate | None:
    """The scenario an item runs; None for any other test."""
    return registry_get_safe(scenario_wrapper_template_registry, getattr(item, "obj", None))


def item_keys(item: pytest.Item, features_dir: Path) -> list[str]:
    """The keys of the records a collected item writes (a property's, one per criterion);
    none for an item that is neither a scenario nor a catalogued property."""
    template = scenario_template(item)
    if template is None:
        check = check_of_item(item)
        return [] if check is None else [check.key(c) for c in check.criteria]
    callspec = getattr(item, "callspec", None)
    example = callspec.id if callspec is not None and template.templated else None
    path = feature_file(template.feature.filename, features_dir.resolve())
    return [scenario_key(path, template.name, example)]


def feature_file(filename: str, features_dir: Path) -> str:
    """A feature file's path as record keys name it: relative to the features directory."""
    return Path(filename).resolve().relative_to(features_dir).as_posix()


def interpretation_tags(tags: Iterable[str]) -> list[str]:
    """The interpretations a scenario rests on, from its `@interpretation:<ID>` tags."""
    return sorted(
        tag.removeprefix(INTERPRETATION_TAG_PREFIX)
        for tag in tags
        if tag.startswith(INTERPRETATION_TAG_PREFIX)
    )


def clause_tags(criterion: str | None, tags: Iterable[str]) -> list[str]:
    """The clauses a scenario checks, from its `@clause:<slug>` tags, as full clause IDs."""
    if criterion is None:
        return []
    return sorted(
        f"{criterion}/{tag.removeprefix(CLAUSE_TAG_PREFIX)}"
        for tag in tags
        if tag.startswith(CLAUSE_TAG_PREFIX)
    )
