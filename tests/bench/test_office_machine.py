"""The bench that sets the office effects search as a schedule beside it as a machine: both
styles judge the reference, and pass it (the bench's cells would mean nothing otherwise), and
both fail a mutant that breaks the opening they share."""

from __future__ import annotations

import pytest

from bench.office_machine import STYLES, measure

pytestmark = pytest.mark.cost(seconds=5)


@pytest.mark.parametrize("style", sorted(STYLES))
def test_each_style_passes_the_reference(style: str) -> None:
    assert measure("reference", style, examples=3, seed_value=1).operations is None


@pytest.mark.parametrize("style", sorted(STYLES))
def test_each_style_fails_a_refusal_before_the_allowance_is_used(style: str) -> None:
    cell = measure("mutant:refuses_before_allowance", style, examples=5, seed_value=1)
    assert cell.operations is not None, cell
