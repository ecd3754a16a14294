"""check-spec flags new, removed and changed criteria in an edited spec; --accept settles them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.inventory import load_inventory
from conformance.spec.registry import REGISTRY_PATH, load_registry
from conformance.spec.spec_drift import SpecDriftError, accept, check_drift, expand_spec_paths
from tests.paths import SHARED_SPEC

OFFICE = "office-assignment-wake-rate-limit.txt"
pytestmark = pytest.mark.skipif(
    not SHARED_SPEC.is_dir(), reason=f"source specs not found at {SHARED_SPEC}"
)


@pytest.fixture
def edited(tmp_path: Path) -> Path:
    copy = tmp_path / OFFICE
    shutil.copy(SHARED_SPEC / OFFICE, copy)
    return copy


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"the spec no longer contains {old!r}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_current_specs_show_no_drift() -> None:
    registry = load_registry()
    drift = check_drift(expand_spec_paths([SHARED_SPEC], registry), registry, load_inventory())
    assert drift.clean, f"drift against the shipped specs: {drift}"


def test_a_changed_sentence_marks_its_criterion_changed(edited: Path) -> None:
    edit(edited, "N shall be 5 and W shall be 10 minutes", "N shall be 6 and W shall be 10 minutes")
    drift = check_drift([edited], load_registry(), load_inventory())
    assert drift.changed == ["AC-OFFICE-ASSIGN-RATE-002.6"]
    assert not drift.new and not drift.removed


def test_a_whitespace_only_edit_is_not_drift(edited: Path) -> None:
    edit(edited, "N shall be 5 and W", "N shall be 5  and\tW")
    assert check_drift([edited], load_registry(), load_inventory()).clean


def test_new_and_removed_criteria_are_listed(edited: Path) -> None:
    edit(edited, "AC-OFFICE-ASSIGN-RATE-003.6:", "AC-OFFICE-ASSIGN-RATE-003.7:")
    drift = check_drift([edited], load_registry(), load_inventory())
    assert drift.new == ["AC-OFFICE-ASSIGN-RATE-003.7"]
    assert drift.uncovered_new == ["AC-OFFICE-ASSIGN-RATE-003.7"]
    assert [criterion for criterion, _ in drift.removed] == ["AC-OFFICE-ASSIGN-RATE-003.6"]
    assert drift.removed[0][1] >= 1, "the removed criterion's scenarios are counted"


def test_a_changed_sentence_marks_the_clauses_that_rest_on_it(edited: Path) -> None:
    edit(edited, "N shall be 5 and W shall be 10 minutes", "N shall be 6 and W shall be 10 minutes")
    drift = check_drift([edited], load_registry(), load_inventory())
    assert drift.changed_clauses == [
        "AC-OFFICE-ASSIGN-RATE-002.6/values",
        "AC-OFFICE-ASSIGN-RATE-002.6/not-configurable",
    ], "both clauses rest on sentence 1 of 002.6; /at-least-one rests on sentence 2 only"


def test_a_clause_whose_span_is_gone_is_lost(edited: Path) -> None:
    edit(edited, " The precedent is checkIdleSkip.", "")
    edit(edited, " This is deliberately the opposite", " This was deliberately the opposite")
    text = edited.read_text(encoding="utf-8")
    edited.write_text(text.replace("Accepted consequence\n", "Consequences we accept\n"))
    drift = check_drift([edited], load_registry(), load_inventory())
    lost = dict(drift.lost_clauses)
    assert "AC-OFFICE-ASSIGN-RATE-001.4/relabel-tolerance" in lost
    assert (
        "no heading 'Accepted consequence'" in lost["AC-OFFICE-ASSIGN-RATE-001.4/relabel-tolerance"]
    )


def test_accept_records_the_new_hash(edited: Path, tmp_path: Path) -> None:
    edit(edited, "N shall be 5 and W shall be 10 minutes", "N shall be 6 and W shall be 10 minutes")
    registry_copy = tmp_path / "criteria.toml"
    shutil.copy(REGISTRY_PATH, registry_copy)
    accepted = [
        "AC-OFFICE-ASSIGN-RATE-002.6",
        "AC-OFFICE-ASSIGN-RATE-002.6/values",
        "AC-OFFICE-ASSIGN-RATE-002.6/not-configurable",
    ]
    assert accept(accepted, [edited], load_registry(), registry_copy) == accepted
    assert check_drift([edited], load_registry(registry_copy), load_inventory()).clean
    before, after = REGISTRY_PATH.read_text().splitlines(), registry_copy.read_text().splitlines()
    changed_lines = [new for old, new in zip(before, after, strict=True) if old != new]
    assert len(changed_lines) == 3, (
        f"accept must change exactly three hash lines, changed {changed_lines}"
    )


def test_accepting_an_unknown_criterion_is_refused(edited: Path, tmp_path: Path) -> None:
    registry_copy = tmp_path / "criteria.toml"
    shutil.copy(REGISTRY_PATH, registry_copy)
    with pytest.raises(SpecDriftError, match="not defined"):
        accept(["AC-OFFICE-ASSIGN-RATE-009.9"], [edited], load_registry(), registry_copy)
    assert registry_copy.read_text() == REGISTRY_PATH.read_text(), "a refused accept writes nothing"


def test_an_unknown_spec_file_is_refused(tmp_path: Path) -> None:
    stray = tmp_path / "other.md"
    stray.write_text("- AC-OFFICE-ASSIGN-RATE-001.1: text\n")
    with pytest.raises(SpecDriftError, match="not a source the registry knows"):
        check_drift([stray], load_registry(), load_inventory())
