"""The scenario inventory: every scenario in the feature files, read with the Gherkin parser.

The inventory is what a run is checked against, so that a scenario that did
not run shows up as `undefined` rather than vanishing from the report.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, cast

from gherkin.parser import Parser
from gherkin.token_scanner import TokenScanner

from conformance.properties.catalogue import property_entries
from conformance.spec.scenario_keys import ScenarioEntry, scenario_key
from conformance.suite import FEATURES_DIR


def load_inventory(
    features_dir: Path = FEATURES_DIR, *, properties: bool = False
) -> list[ScenarioEntry]:
    """Every scenario of the feature files; with `properties`, every property's records too."""
    entries: list[ScenarioEntry] = []
    for path in sorted(features_dir.glob("**/*.feature")):
        entries.extend(_feature_entries(path, path.relative_to(features_dir).as_posix()))
    if properties:
        entries.extend(property_entries())
    return entries


def _feature_entries(path: Path, relative: str) -> list[ScenarioEntry]:
    feature = _parsed(path.read_text(encoding="utf-8")).get("feature")
    if feature is None:
        return []
    feature_tags = _tag_names(feature)
    entries: list[ScenarioEntry] = []
    for scenario in _scenarios(feature["children"]):
        tags = feature_tags + _tag_names(scenario)
        for example in _example_ids(scenario):
            entries.append(
                ScenarioEntry(
                    key=scenario_key(relative, scenario["name"], example),
                    feature_file=relative,
                    feature=feature["name"],
                    name=scenario["name"],
                    line=scenario["location"]["line"],
                    tags=tags,
                    example=example,
                )
            )
    return entries


@functools.lru_cache(maxsize=64)
def _parsed(text: str) -> dict[str, Any]:
    """A feature file's Gherkin document, parsed once per process for each text: the suite
    runs `conformance strength` forks from its warm server find every file parsed already."""
    return cast(dict[str, Any], Parser().parse(TokenScanner(text)))


def _scenarios(children: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for child in children:
        if "scenario" in child:
            found.append(child["scenario"])
        elif "rule" in child:
            found.extend(_scenarios(child["rule"]["children"]))
    return found


def _tag_names(node: dict[str, Any]) -> tuple[str, ...]:
    return tuple(tag["name"].lstrip("@") for tag in node.get("tags", []))


def _example_ids(scenario: dict[str, Any]) -> list[str | None]:
    """pytest-bdd names an outline's example by its cell values joined with '-'."""
    rows = [
        row for examples in scenario.get("examples", []) for row in examples.get("tableBody", [])
    ]
    if not scenario.get("examples"):
        return [None]
    return ["-".join(cell["value"] for cell in row["cells"]) for row in rows]
