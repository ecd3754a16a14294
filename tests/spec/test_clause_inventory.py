"""Every check names what it enforces, by an ID the register knows.

Read statically from the source of the steps, the race programs and the property checks, and
from the feature files' tags:

- no bare `assert` judges an implementation: checks go through `expect` (or `violated`),
  which cite clause or interpretation IDs;
- every ID written in that code is a clause of the registry or an interpretation the kit
  still takes (`expect` refuses any other when it runs, too);
- a scenario's `@clause:` tags name clauses of its own criterion, its `@interpretation:`
  tags interpretations the kit takes.

Whether every clause is enforced somewhere is read from what the checks recorded in a run
(tests/spec/test_evidence_inventory.py), not from where an ID is written.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conformance.inventory import load_inventory
from conformance.spec.registry import (
    CLAUSE_ID,
    CLAUSE_TAG_PREFIX,
    INTERPRETATION_ID,
    INTERPRETATION_TAG_PREFIX,
    default_registry,
)
from tests.paths import CHECKOUT

ROOT = CHECKOUT
JUDGING_CODE = sorted(
    [
        *ROOT.glob("steps/*.py"),
        ROOT / "conformance" / "concurrency" / "races.py",
        ROOT / "conformance" / "concurrency" / "work_request_calls.py",
        *ROOT.glob("conformance/properties/*.py"),
        *ROOT.glob("conformance/oracle/*.py"),
    ]
)
"""Where checks of an implementation are made: no bare `assert` there, and every check cites."""
CITING_CODE = sorted({*JUDGING_CODE, *ROOT.glob("conformance/**/*.py")})
"""Every module that may write a clause or interpretation ID: each it writes must be known."""
CITE = re.compile(rf"^(?:{CLAUSE_ID.pattern}|{INTERPRETATION_ID.pattern})$")
CHECKS = {"expect", "violated"}


def _trees(paths: list[Path] = JUDGING_CODE) -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8")) for path in paths}


def cited_in_code() -> dict[str, set[Path]]:
    """Every clause or interpretation ID written as a string anywhere in the kit's code."""
    found: dict[str, set[Path]] = {}
    for path, tree in _trees(CITING_CODE).items():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and CITE.match(node.value)
            ):
                found.setdefault(node.value, set()).add(path)
    return found


def test_no_bare_assert_judges_an_implementation() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path, tree in _trees().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Assert)
    ]
    assert not offenders, (
        "use expect(condition, cite, detail) to judge, scenario_requires/port_requires for "
        f"the scenario's own or the port's preconditions: {offenders}"
    )


def test_every_check_cites_something() -> None:
    """A call of `expect` or `violated` passes a cite; an empty literal cites nothing."""
    empty = []
    for path, tree in _trees().items():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) in CHECKS):
                continue
            position = 1 if getattr(node.func, "id", None) == "expect" else 0
            cite = node.args[position] if len(node.args) > position else None
            if cite is None or (isinstance(cite, ast.Tuple | ast.List) and not cite.elts):
                empty.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not empty, f"checks that cite nothing: {empty}"


def test_every_id_in_the_judging_code_is_known() -> None:
    registry = default_registry()
    unknown = {
        cite: sorted(str(p.relative_to(ROOT)) for p in paths)
        for cite, paths in cited_in_code().items()
        if not registry.is_citable(cite)
    }
    assert not unknown, f"cites of no clause, or of a retired interpretation: {unknown}"


def test_no_code_writes_a_clause_marked_not_observable() -> None:
    """A clause the register says no port can show is judged nowhere: a check of it, in a
    scenario's step or in a model, would pretend otherwise."""
    registry = default_registry()
    written = cited_in_code()
    contradictions = [c.id for c in registry.clauses if c.not_observable and c.id in written]
    assert not contradictions, f"marked not observable, yet written in a check: {contradictions}"


def test_a_clause_marked_not_observable_says_why() -> None:
    for clause in default_registry().clauses:
        if clause.not_observable is not None:
            assert len(clause.not_observable) > 20, f"{clause.id} says too little of why"


@pytest.mark.parametrize("entry", load_inventory(), ids=lambda entry: entry.key)
def test_scenario_tags_name_known_clauses_and_interpretations(entry: object) -> None:
    registry = default_registry()
    criteria = entry.criteria  # type: ignore[attr-defined]
    tags = entry.tags  # type: ignore[attr-defined]
    own = {clause.id for clause in registry.criterion(criteria[0]).clauses}
    for tag in tags:
        if tag.startswith(CLAUSE_TAG_PREFIX):
            clause = f"{criteria[0]}/{tag.removeprefix(CLAUSE_TAG_PREFIX)}"
            assert clause in own, f"@{tag} is no clause of {criteria[0]}"
        if tag.startswith(INTERPRETATION_TAG_PREFIX):
            interpretation = tag.removeprefix(INTERPRETATION_TAG_PREFIX)
            assert registry.is_citable(interpretation), f"@{tag} names no active interpretation"


def test_every_reading_a_scenario_rests_on_is_registered_under_its_criterion() -> None:
    """A divergence is charged to the criteria its reading is registered under: a scenario of a
    criterion that rests on a reading the register does not list under it could not be."""
    registry = default_registry()
    unregistered = sorted(
        f"{entry.key}: {tag}"
        for entry in load_inventory()
        for tag in entry.tags
        if tag.startswith(INTERPRETATION_TAG_PREFIX)
        and entry.criteria
        and entry.criteria[0]
        not in registry.interpretation(tag.removeprefix(INTERPRETATION_TAG_PREFIX)).criteria
    )
    assert not unregistered, unregistered
