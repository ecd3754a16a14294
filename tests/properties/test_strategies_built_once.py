"""The models' per-argument strategies are built once and draw as built anew.

A strategy made at every draw cost a short search of the work-request machine a quarter of its
time (Hypothesis checks each new one before it draws), so the factories the models call at every
step are cached. A cached
strategy must draw what a fresh one draws from the same seed, and keep every branch listed for
weight: `one_of` keeps a branch once by identity, so caching a part listed twice would change
what the machine draws.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.properties.hostile_data import (
    assignees,
    claimants,
    granting,
    odd_payloads,
    permission_sets,
)
from conformance.properties.office_operations import kind_of
from conformance.properties.work_request_leases import clock_steps
from conformance.properties.work_request_terms import slices

ORIGIN = granting({"shell", "sh"}, {"mic"})
ROOT = granting({"shell", "sh", "compiler"}, {"mic", "camera"})
CACHED: dict[str, tuple[Callable[..., st.SearchStrategy[Any]], tuple[Any, ...]]] = {
    "permission sets": (permission_sets, (ORIGIN, ROOT)),
    "permission sets of a root": (permission_sets, (ROOT, ROOT)),
    "assignees": (assignees, ("studio",)),
    "claimants": (claimants, (None, "studio")),
    "slices": (slices, (7,)),
    "clock steps": (clock_steps, (timedelta(minutes=5),)),
    "kinds of operation": (kind_of, (("assign", "assign", "raw", "batch"),)),
    "odd payloads": (odd_payloads, ()),
}


def drawn(strategy: st.SearchStrategy[Any]) -> list[Any]:
    """What a derandomized search draws from the strategy, in order."""
    values: list[Any] = []

    @settings(derandomize=True, database=None, max_examples=40)
    @given(strategy)
    def collect(value: Any) -> None:
        values.append(value)

    collect()
    return values


@pytest.mark.parametrize("name", CACHED)
def test_a_cached_strategy_is_one_object_and_draws_what_a_fresh_one_draws(name: str) -> None:
    factory, arguments = CACHED[name]
    cached = factory(*arguments)
    fresh = factory.__wrapped__(*arguments)  # type: ignore[attr-defined]
    assert factory(*arguments) is cached
    assert len(cached.branches) == len(fresh.branches)
    assert drawn(cached) == drawn(fresh)


def test_a_root_s_permission_sets_keep_both_narrowings_listed_for_weight() -> None:
    """Two narrowings of the originator, one of the root, two widenings (a tool or a device)."""
    assert len(permission_sets(ROOT, ROOT).branches) == 5
