"""A declared alternative sets aside only the answers it allows, named by the register.

Every alternative says, beside its sentence in criteria.toml, which kinds of answer it allows;
a failed check of a reading says which kind it saw. Declared, an alternative sets the check
aside only for a kind it allows: any other answer is a break, whatever was declared.
"""

from __future__ import annotations

import ast

import pytest

from conformance.driver import ErrorCode
from conformance.spec.clause_check import ClauseViolation, ReadingLog, expect, open_reading_log
from conformance.spec.evidence import Ledger, Tally, open_ledger
from conformance.spec.registry import (
    ANSWERS,
    Alternative,
    Interpretation,
    _check_alternatives,
    default_registry,
)
from tests.paths import STEPS

REGISTRY = default_registry()
ALTERNATIVES = [
    (i.id, alternative) for i in REGISTRY.active_interpretations() for alternative in i.alternatives
]


def judged(declared: dict[str, str], question: str, observed: str) -> Tally:
    ledger, log = Ledger(), ReadingLog(declared=declared)
    closers = (open_ledger(ledger), open_reading_log(log))
    try:
        expect(False, question, "an answer the kit's reading does not give", observed=observed)
    finally:
        for close in reversed(closers):
            close()
    return ledger.tallies[question]


@pytest.mark.parametrize(("question", "alternative"), ALTERNATIVES, ids=lambda x: str(x))
def test_a_declared_alternative_sets_aside_what_it_allows_and_nothing_else(
    question: str, alternative: Alternative
) -> None:
    declared = {question: alternative.name}
    for observed in alternative.allows:
        assert judged(declared, question, observed) == Tally(set_aside=1)
    forbidden = [kind for kind in ANSWERS if not alternative.allows_answer(kind)]
    for observed in forbidden:
        assert judged(declared, question, observed) == Tally(broken=1), observed


@pytest.mark.parametrize(("question", "alternative"), ALTERNATIVES, ids=lambda x: str(x))
def test_undeclared_an_answer_an_alternative_allows_diverges_and_another_breaks(
    question: str, alternative: Alternative
) -> None:
    observed = alternative.allows[0]
    assert judged({}, question, observed).diverged
    others = REGISTRY.interpretation(question).alternatives
    unallowed = [kind for kind in ANSWERS if not any(a.allows_answer(kind) for a in others)]
    assert unallowed, f"{question}: its alternatives between them allow every kind of answer"
    assert judged({}, question, unallowed[0]) == Tally(broken=1)


def test_a_refusal_is_allowed_by_its_code_or_by_any_refusal() -> None:
    forbidden = Alternative("x", "r", allows=("refused:forbidden",))
    assert forbidden.allows_answer("refused:forbidden")
    assert not forbidden.allows_answer("refused:not_found")
    assert Alternative("y", "r", allows=("refused",)).allows_answer("refused:not_found")


def test_every_refusal_an_alternative_names_is_a_code_of_the_port() -> None:
    codes = {code.value for code in ErrorCode}
    named = {kind.partition(":")[2] for _, a in ALTERNATIVES for kind in a.allows if ":" in kind}
    assert named <= codes


def test_an_alternative_that_says_nothing_of_what_it_allows_is_refused_at_load() -> None:
    silent = Interpretation("WR-99", (), "r", alternatives=(Alternative("quiet", "r", ()),))
    with pytest.raises(ValueError, match="must say which answers"):
        _check_alternatives(silent)
    unknown = Interpretation("WR-99", (), "r", alternatives=(Alternative("odd", "r", ("odd",)),))
    with pytest.raises(ValueError, match="must say which answers"):
        _check_alternatives(unknown)


def test_a_model_judging_again_leaves_only_the_readings_it_could_not_judge() -> None:
    violation = ClauseViolation(("WR-7",), "a generation", REGISTRY)
    assert violation.allowed == {"WR-7": ("newer-not-next", "heartbeat-regenerates")}
    violation.narrowed({"WR-7": {"newer-not-next", "kit"}})
    assert violation.allowed == {"WR-7": ("heartbeat-regenerates",)}


def checks_by_reading(tree: ast.AST) -> list[ast.Call]:
    """The calls of steps' checks whose cites rest on a step's `as ... reads it` prefix."""
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) in {"expect", "violated", "expect_clean_check"}
        and any("cite_or_reading" in ast.unparse(arg) for arg in node.args)
    ]


def test_every_check_of_a_step_s_reading_names_the_kind_of_answer_it_saw() -> None:
    """Without it a declared alternative would set aside any answer at all."""
    found = 0
    for path in sorted(STEPS.glob("*.py")):
        for call in checks_by_reading(ast.parse(path.read_text())):
            found += 1
            named = {keyword.arg for keyword in call.keywords}
            positional = len(call.args) >= 4 and getattr(call.func, "id", "") == (
                "expect_clean_check"
            )
            assert "observed" in named or positional, f"{path.name}:{call.lineno}"
    assert found >= 10
