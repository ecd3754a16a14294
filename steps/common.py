"""Steps shared by every feature: the clock the harness owns, and restarts."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from pytest_bdd import given, parsers, when
from pytest_bdd.parser import Step

from conformance.applicability import require
from conformance.driver import Capability, Driver
from conformance.properties.gherkin import RESTART_STEP

BEFORE_RESTART = pytest.StashKey[list[Callable[[], None]]]()
"""What the scenario's state keepers note just before a restart (see `implementation_restarts`)."""

BEFORE_THEN = pytest.StashKey[list[Callable[[], None]]]()
"""What the scenario's state keepers settle before any Then step: When steps act and judge
nothing, so what an action showed wrong (a needed action refused, an assignment answering
another assignee) is judged by the next Then step."""


def pytest_bdd_before_step_call(request: pytest.FixtureRequest, step: Step) -> None:
    if step.type == "then":
        for settle in request.node.stash.get(BEFORE_THEN, []):
            settle()


READING = r"(?:as (?P<reading>(?:WR|OF)-\d+(?:(?:, | and )(?:WR|OF)-\d+)*) reads? it, )?"
"""An optional `as WR-n reads it, ` (or `as WR-1, WR-3 and WR-15 read it, `) before a step: what it
checks (or, on a When step, the acceptance the scenario needs) then rests on those
interpretations alone, so an implementation reading the spec otherwise is diverged, not
failed, and one that declares another reading of any of them has the check set aside."""


def readings_named(reading: str | None) -> list[str]:
    """The interpretations a step's `as ... read it,` prefix names (none without one)."""
    return [] if reading is None else re.findall(r"(?:WR|OF)-\d+", reading)


def quoted(text: str) -> list[str]:
    """The quoted words of `"alice", "bob" and "carol"`."""
    return re.findall(r'"([^"]*)"', text)


_UNITS = {
    "microsecond": timedelta(microseconds=1),
    "millisecond": timedelta(milliseconds=1),
    "second": timedelta(seconds=1),
    "minute": timedelta(minutes=1),
    "hour": timedelta(hours=1),
}
_PART = re.compile(r"(\d+)\s+(microsecond|millisecond|second|minute|hour)s?")
_DURATION = r"(?P<duration>\d+ [a-z]+(?:,? (?:and )?\d+ [a-z]+)*)"


def parse_duration(text: str) -> timedelta:
    """Read "10 minutes", "9 minutes 59 seconds" or "4 seconds and 999999 microseconds"."""
    cleaned = text.replace(",", " ").replace(" and ", " ").strip()
    parts = _PART.findall(cleaned)
    if not parts or _PART.sub("", cleaned).strip():
        raise ValueError(f"not a duration: {text!r}")
    return sum((int(amount) * _UNITS[unit] for amount, unit in parts), timedelta())


def parse_instant(text: str) -> datetime:
    """An ISO 8601 instant; it must carry a zone (Z or an offset)."""
    instant = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if instant.tzinfo is None:
        raise ValueError(f"instant {text!r} has no time zone")
    return instant


@given(parsers.parse('the clock reads "{instant}"'))
@when(parsers.parse('the clock reads "{instant}"'))
def clock_reads(driver: Driver, instant: str) -> None:
    driver.set_clock(parse_instant(instant))


@when(parsers.re(_DURATION + r" pass(?:es)?"))
@given(parsers.re(_DURATION + r" pass(?:es)?"))
def time_passes(driver: Driver, duration: str) -> None:
    driver.advance_clock(parse_duration(duration))


@when(RESTART_STEP)
@given(RESTART_STEP)
def implementation_restarts(driver: Driver, request: pytest.FixtureRequest) -> None:
    """Stop and start the implementation on its store; first, whatever keeps the scenario's
    state notes what must read the same afterwards."""
    require(driver, Capability.RESTART)
    for note in request.node.stash.get(BEFORE_RESTART, []):
        note()
    driver.restart()
