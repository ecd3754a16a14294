"""Judging one step again under another reading, without asking the implementation twice.

When a state machine's step fails a check that cites only registered interpretations, the
implementation may simply read that open question otherwise. To find out, the step is run
again from the model's state before it, under an alternative reading, with every call to the
implementation and every draw answered from a tape of the first run: the implementation is
not called again for what it already answered, and Hypothesis draws nothing new. A call the
tape does not hold yet (the first run stopped before it) goes to the implementation and joins
the tape; a call that differs from the one the tape holds at that point means the step took
another path under that reading, which cannot be judged from what the implementation said.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

from hypothesis import currently_in_test_context, note
from hypothesis import strategies as st

from conformance.driver import DriverError, Value

T = TypeVar("T")
D = TypeVar("D")


class OffTheTape(Exception):
    """A step judged again made a call other than the one the implementation answered."""


@dataclass
class _Call:
    operation: str
    arguments: tuple[Any, ...]
    answer: Any = None
    error: DriverError | None = None


@dataclass
class Tape:
    """One step's calls to the implementation and its draws, in the order they happened."""

    calls: list[_Call] = field(default_factory=list)
    draws: list[Any] = field(default_factory=list)
    replaying: bool = False
    _call: int = 0
    _draw: int = 0

    def rewind(self) -> None:
        """Answer from the start of the tape again."""
        self.replaying, self._call, self._draw = True, 0, 0

    def answer(self, operation: str, arguments: tuple[Any, ...], live: Callable[[], Any]) -> Any:
        """The implementation's answer to a call: from the tape where it holds the call."""
        if self.replaying and self._call < len(self.calls):
            taped = self.calls[self._call]
            if (taped.operation, taped.arguments) != (operation, arguments):
                raise OffTheTape(f"{operation}{arguments} where the tape holds {taped.operation}")
            self._call += 1
            if taped.error is not None:
                raise taped.error
            return _handed_out(taped.answer)
        call = _Call(operation, copy.deepcopy(arguments))
        try:
            call.answer = live()
        except DriverError as error:
            call.error = error
            raise
        finally:
            self.calls.append(call)
            self._call = len(self.calls)
        return _handed_out(call.answer)

    def draw(self, live: Callable[[], T]) -> T:
        """A drawn value: from the tape when judging again, so nothing new is ever drawn then
        (a draw the first run did not make would change what Hypothesis replays)."""
        if self.replaying:
            if self._draw >= len(self.draws):
                raise OffTheTape("judged again, the step draws what its first run did not")
            self._draw += 1
            value: T = copy.deepcopy(self.draws[self._draw - 1])
            return value
        value = live()
        self.draws.append(copy.deepcopy(value))
        self._draw = len(self.draws)
        return value

    def say(self, text: str) -> None:
        """A note for the shrunk program, made once: not again when a step is judged again."""
        if not self.replaying:
            note_if_searching(text)


def _handed_out(answer: Any) -> Any:
    """An answer the tape may hand out more than once: a port value is frozen, so it is shared,
    and so are a list's frozen items; anything else is copied whole."""
    if isinstance(answer, Value) or answer is None:
        return answer
    if isinstance(answer, list) and all(isinstance(item, Value) for item in answer):
        return list(answer)
    return copy.deepcopy(answer)


def note_if_searching(text: str) -> None:
    """Hypothesis' note, where a search runs (a machine driven step by step has none)."""
    if currently_in_test_context():
        note(text)


def taped(driver: D, tape: Callable[[], Tape]) -> D:
    """`driver` as a step sees it: the same operations, every call through the tape."""
    return cast(D, _TapedDriver(driver, tape))


class _TapedDriver(Generic[D]):
    def __init__(self, driver: D, tape: Callable[[], Tape]) -> None:
        self._driver = driver
        self._tape = tape

    def __getattr__(self, operation: str) -> Callable[..., Any]:
        live = getattr(self._driver, operation)

        def call(*arguments: Any, **named: Any) -> Any:
            asked = (*arguments, *sorted(named.items()))
            return self._tape().answer(operation, asked, lambda: live(*arguments, **named))

        return call


@runtime_checkable
class Draws(Protocol):
    """What a step draws from: Hypothesis' `data`, or the same through a tape."""

    def draw(self, strategy: st.SearchStrategy[T], label: str | None = None) -> T: ...


class TapedData:
    """Hypothesis' `data` as a step sees it: every draw goes through the tape."""

    def __init__(self, data: Draws, tape: Tape) -> None:
        self._data = data
        self._tape = tape

    def draw(self, strategy: st.SearchStrategy[T], label: str | None = None) -> T:
        return self._tape.draw(lambda: self._data.draw(strategy, label=label))


@contextmanager
def replaying(tape: Tape) -> Iterator[Tape]:
    """Judge the step again from the start of its tape; the tape records live after."""
    tape.rewind()
    try:
        yield tape
    finally:
        tape.replaying = False
