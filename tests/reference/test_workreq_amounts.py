"""Budgets, slices and usage are whole numbers in range; anything else is invalid input."""

from __future__ import annotations

import pytest

from conformance.reference.errors import InvalidInput
from conformance.reference.workreq.registry import MAX_AMOUNT, require_amount


@pytest.mark.parametrize("value", [1, 10, MAX_AMOUNT])
def test_whole_numbers_in_range_are_amounts(value: int) -> None:
    assert require_amount(value, "usage") == value


@pytest.mark.parametrize(
    "value", [0, -1, MAX_AMOUNT + 1, 2**63, 1.5, float("nan"), True, "10", None]
)
def test_anything_else_is_invalid_input(value: object) -> None:
    with pytest.raises(InvalidInput, match="usage must be"):
        require_amount(value, "usage")
