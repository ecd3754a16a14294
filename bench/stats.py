"""Small statistics over timing samples, and the stopwatch they come from."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import TypeVar

T = TypeVar("T")

MICROS = 1e6
MILLIS = 1e3


def timed(operation: Callable[[], T]) -> tuple[T, float]:
    """The operation's value and how long it took, in seconds."""
    start = perf_counter()
    value = operation()
    return value, perf_counter() - start


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def percentile(samples: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile: a value actually observed, never an interpolation."""
    ordered = sorted(samples)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else 0.0
