"""CONFORMANCE_PROPERTY_SHRINK=0 leaves shrinking and explaining out of every search (a sweep
wants verdicts), and nothing else; unset, the searches keep every phase they had."""

from __future__ import annotations

import pytest
from hypothesis import Phase

from conformance.running.properties_plugin import SHRINK, phases


def test_unset_every_phase_but_those_left_out_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SHRINK, raising=False)
    assert phases() == list(Phase)
    assert phases(Phase.explain) == [p for p in Phase if p is not Phase.explain]


@pytest.mark.parametrize("value", ["0", " 0 "])
def test_zero_stops_at_the_first_failing_example(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(SHRINK, value)
    assert Phase.generate in phases() and Phase.reuse in phases()
    assert Phase.shrink not in phases() and Phase.explain not in phases(Phase.explain)


def test_any_other_value_shrinks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SHRINK, "1")
    assert Phase.shrink in phases()
