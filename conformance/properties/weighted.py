"""A choice among strategies, each drawn as often as its weight says.

Hypothesis' `one_of` draws its branches uniformly and keeps each branch once, by identity: a
strategy listed twice to be drawn twice as often counts once. A weight above one is therefore
made of distinct copies of the strategy (a map that changes nothing), which draw, shrink and
replay as the strategy itself does.
"""

from __future__ import annotations

from typing import TypeVar

from hypothesis import strategies as st

T = TypeVar("T")


def weighted(*choices: tuple[int, st.SearchStrategy[T]]) -> st.SearchStrategy[T]:
    """`one_of` over the strategies, in the order given (shrinking prefers the first), each
    `weight` times."""
    if not choices or any(weight < 1 for weight, _ in choices):
        raise ValueError(f"every choice needs a weight of at least 1: {choices}")
    return st.one_of(
        *(
            strategy if copy == 0 else strategy.map(_unchanged)
            for weight, strategy in choices
            for copy in range(weight)
        )
    )


def _unchanged(value: T) -> T:
    return value
