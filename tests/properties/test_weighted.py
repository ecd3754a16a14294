"""A choice drawn as often as its weight says, where `one_of` alone would count a strategy
listed twice once.

The searches' docstrings promise proportions ("mostly nobody or a member", "bursts, most
often"); these tests hold the strategies to the weights written beside those promises.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from random import Random
from typing import Any

import pytest
from hypothesis import find
from hypothesis import strategies as st
from hypothesis.internal.conjecture.data import ConjectureData

from conformance.properties.hostile_data import (
    ENVIRONMENT_MEMBERS,
    assignees,
    claimants,
)
from conformance.properties.office_operations import gaps
from conformance.properties.weighted import weighted
from conformance.properties.work_request_terms import slices

ENVIRONMENT = next(iter(ENVIRONMENT_MEMBERS))
DRAWS = 3000


def shares(strategy: st.SearchStrategy[Any], kind: Callable[[Any], str]) -> Counter[str]:
    """How DRAWS draws from random choices fall, by `kind` (a search's own draws lean on
    its simplest choices, which would hide the proportions)."""
    counted: Counter[str] = Counter()
    for seed in range(DRAWS):
        counted[kind(ConjectureData(random=Random(seed)).draw(strategy))] += 1
    return counted


def test_one_of_alone_counts_a_strategy_listed_twice_once() -> None:
    """Why the helper exists: Hypothesis keeps a branch once by identity."""
    members = st.sampled_from(["a", "b"])
    assert len(st.one_of(members, members, st.none()).branches) == 2


def test_a_weight_is_as_many_branches_and_the_order_is_kept() -> None:
    members = st.sampled_from(["a", "b"])
    chosen = weighted((2, st.just(0)), (3, members), (1, st.none()))
    simplest = [find(branch, lambda _: True) for branch in chosen.branches]
    assert simplest == [0, 0, "a", "a", "a", None]
    assert find(chosen, lambda _: True) == 0, "shrinking prefers the first choice"


@pytest.mark.parametrize("choices", [(), ((0, st.none()),), ((2, st.none()), (-1, st.none()))])
def test_a_choice_without_a_positive_weight_is_refused(choices: Any) -> None:
    with pytest.raises(ValueError, match="weight of at least 1"):
        weighted(*choices)


def test_draws_follow_the_weights() -> None:
    """Two to one, within what 3,000 draws can tell apart from one to one."""
    counted = shares(weighted((2, st.just("often")), (1, st.just("seldom"))), str)
    assert 1.7 < counted["often"] / counted["seldom"] < 2.4, counted


@pytest.mark.parametrize(
    ("name", "strategy", "branches"),
    [
        ("assignees: nobody twice, a member twice, anyone once", assignees(ENVIRONMENT), 5),
        ("claimants: someone entitled twice, anyone once", claimants(None, ENVIRONMENT), 3),
        ("slices: any, affordable twice, just beyond", slices(7), 4),
        ("gaps: none, micros, seconds thrice, most of a window, an edge", gaps(timedelta(600)), 7),
    ],
)
def test_the_searches_draw_by_the_weights_written(
    name: str, strategy: st.SearchStrategy[Any], branches: int
) -> None:
    assert len(strategy.branches) == branches, name
