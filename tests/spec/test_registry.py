"""The registry is consistent, and its hashes match the source specs when they are at hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.spec.registry import KIT_READING, REGISTRY_PATH, load_registry
from conformance.spec.spec_text import read_criteria, text_hash
from tests.paths import SHARED_SPEC

PUNCTUATION = ".,;:()\"'"


def test_registry_lists_38_criteria_in_four_requirements() -> None:
    registry = load_registry()
    assert len(registry.criteria) == 38
    assert [r.id for r in registry.requirements] == [
        "REQ-OFFICE-ASSIGN-RATE-001",
        "REQ-OFFICE-ASSIGN-RATE-002",
        "REQ-OFFICE-ASSIGN-RATE-003",
        "REQ-ARMONIA-WORKREQ-001",
    ]


def test_registry_rejects_an_unknown_requirement(tmp_path: Path) -> None:
    text = REGISTRY_PATH.read_text(encoding="utf-8")
    broken = tmp_path / "criteria.toml"
    broken.write_text(
        text.replace('requirement = "REQ-OFFICE-ASSIGN-RATE-002"', 'requirement = "REQ-NOPE"', 1)
    )
    with pytest.raises(ValueError, match="unknown requirement REQ-NOPE"):
        load_registry(broken)


def test_whitespace_layout_does_not_change_a_hash() -> None:
    assert text_hash("a  b\n c") == text_hash("a b c")
    assert text_hash("a b c") != text_hash("a b d")


@pytest.mark.skipif(not SHARED_SPEC.is_dir(), reason=f"source specs not found at {SHARED_SPEC}")
def test_registry_hashes_match_the_source_specs() -> None:
    registry = load_registry()
    for source in {criterion.source for criterion in registry.criteria}:
        current = {c.criterion_id: c.text_hash for c in read_criteria(SHARED_SPEC / source)}
        recorded = {c.id: c.source_hash for c in registry.criteria if c.source == source}
        assert current == recorded, f"{source}: registry hashes differ from the spec text"


def test_no_statement_copies_a_spec_sentence() -> None:
    if not SHARED_SPEC.is_dir():
        pytest.skip(f"source specs not found at {SHARED_SPEC}")
    registry = load_registry()
    for criterion in registry.criteria:
        source = {c.criterion_id: c.text for c in read_criteria(SHARED_SPEC / criterion.source)}
        sentences = [s.strip() for s in source[criterion.id].split(".") if len(s.strip()) > 40]
        copied = [s for s in sentences if s in criterion.statement]
        assert not copied, f"{criterion.id} statement copies the spec: {copied}"


def test_every_criterion_has_clauses_with_unique_ids() -> None:
    registry = load_registry()
    ids = [clause.id for clause in registry.clauses]
    assert len(ids) == len(set(ids))
    assert all(criterion.clauses for criterion in registry.criteria)
    assert len(ids) >= 2 * len(registry.criteria) - 10


@pytest.mark.skipif(not SHARED_SPEC.is_dir(), reason=f"source specs not found at {SHARED_SPEC}")
def test_every_clause_span_is_found_and_its_hash_matches() -> None:
    from conformance.spec.spec_text import read_span

    for clause in load_registry().clauses:
        span = read_span(SHARED_SPEC / clause.span.file, clause.span)
        assert text_hash(span) == clause.span_hash, f"{clause.id}: span changed ({clause.span})"


@pytest.mark.skipif(not SHARED_SPEC.is_dir(), reason=f"source specs not found at {SHARED_SPEC}")
def test_no_clause_statement_copies_six_words_of_its_span() -> None:
    """The kit states every clause in its own words; a run of six words is a copy."""
    from conformance.spec.spec_text import read_span

    def runs(text: str) -> set[tuple[str, ...]]:
        words = [w.strip(PUNCTUATION).lower() for w in text.split()]
        return {tuple(words[i : i + 6]) for i in range(len(words) - 5)}

    for clause in load_registry().clauses:
        span = read_span(SHARED_SPEC / clause.span.file, clause.span)
        copied = runs(clause.statement) & runs(span)
        assert not copied, f"{clause.id} copies the spec: {sorted(copied)[:2]}"


def test_every_clause_of_the_work_request_spec_rests_on_the_source_spec_or_its_row() -> None:
    """A clause anchored in the kit's own criteria table must be the row's own definition of the
    criterion, never an obligation the source is silent on (such a one is a registered reading:
    WR-19, a heartbeat after expiry)."""
    anchored_in_table = {
        clause.id
        for clause in load_registry().clauses
        if clause.span.file == "work-request-criteria.md"
    }
    assert anchored_in_table == {"AC-ARMONIA-WORKREQ-001.13/usage-within-slice"}


def test_every_interpretation_names_its_alternatives_and_the_kits_reading_comes_first() -> None:
    registry = load_registry()
    for interpretation in registry.active_interpretations():
        names = interpretation.names()
        assert names[0] == KIT_READING and len(names) == len(set(names))
        assert interpretation.alternative(KIT_READING) is None
    late = registry.interpretation("WR-19")
    assert "AC-ARMONIA-WORKREQ-001.12" in late.criteria
    assert late.alternative("renews-expired") is not None


def test_a_registry_with_an_alternative_named_like_the_kits_reading_is_refused(
    tmp_path: Path,
) -> None:
    text = REGISTRY_PATH.read_text(encoding="utf-8").replace(
        'name = "forfeit"', f'name = "{KIT_READING}"'
    )
    path = tmp_path / "criteria.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="WR-3 names an alternative twice"):
        load_registry(path)


def test_readings_are_charged_to_the_criteria_they_are_registered_under() -> None:
    registry = load_registry()
    assert registry.criteria_of_readings(["WR-13"]) == {
        "AC-ARMONIA-WORKREQ-001.1",
        "AC-ARMONIA-WORKREQ-001.13",
    }
    assert registry.criteria_of_readings(["AC-ARMONIA-WORKREQ-001.7/fenced", "WR-17"]) == {
        "AC-ARMONIA-WORKREQ-001.7",
        "AC-ARMONIA-WORKREQ-001.5",
    }


def test_where_a_remainder_goes_past_a_completed_originator_reaches_what_a_remainder_does() -> None:
    """WR-15 settles, for one case, where WR-3's remainder goes back to, so a reading of it
    shows wherever a remainder counts: the campaign's available budget (001.1), what survives a
    restart (001.3), what a completion returns (001.6), conservation (001.9) and what a child can
    still spend (001.13). Registered under 001.9 alone, a variant reading it otherwise was
    falsely failed by `conformance strength --properties thorough` (seed 27), the machine's
    budget check citing both readings on all five."""
    registry = load_registry()
    assert registry.criteria_of_readings(["WR-15"]) == registry.criteria_of_readings(["WR-3"])


@pytest.mark.parametrize(
    ("replaced", "by", "said"),
    [
        (
            'interprets = ["AC-ARMONIA-WORKREQ-001.4/claimable-again"]\n',
            "",
            "WR-6 must name the clauses it interprets",
        ),
        (
            'interprets = ["AC-ARMONIA-WORKREQ-001.4/claimable-again"]\n',
            'interprets = ["AC-ARMONIA-WORKREQ-001.7/fenced"]\n',
            "WR-6 interprets 'AC-ARMONIA-WORKREQ-001.7/fenced', which is not a clause of",
        ),
    ],
)
def test_a_question_must_name_clauses_of_its_own_criteria_that_it_reads(
    tmp_path: Path, replaced: str, by: str, said: str
) -> None:
    """`conformance readings --spec` quotes the sentences a question reads from these."""
    text = REGISTRY_PATH.read_text(encoding="utf-8")
    assert text.count(replaced) == 1
    path = tmp_path / "criteria.toml"
    path.write_text(text.replace(replaced, by), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(said)):
        load_registry(path)
