"""Is a history linearizable? Wing and Gong's search, as Porcupine and Knossos run it.

A history is explained when its operations can be put in one order, consistent with their
real-time order (one that finished before another began comes first), in which a pure model
answers every definite call as the implementation did. A call whose outcome is unknown may
take effect at any point after it began, or never: the search tries both, and carries it
forward as pending until the history ends.

The history is cut where nothing overlaps (calls made one at a time cost one step each), and
each concurrent stretch is searched depth-first, memoised on the set of calls placed and the
model's state, so a batch of a dozen calls stays cheap. Every distinct state the batch can end
in is kept (Knossos' configurations) and the next stretch starts from each of them.

The model is any mutable object, copied before each try; `step` applies one operation to it and
returns None when the model explains the answer, or a `Mismatch` saying which clauses the answer
breaks. When no order explains a stretch, the mismatches met at the deepest point any order
reached are the evidence: those calls could not be placed next by any order that went that far.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from conformance.concurrency.history import Operation

M = TypeVar("M")

MAX_TRIES = 200_000
"""Tries of one stretch before the search gives up: far beyond any batch the kit draws (a batch
of twelve calls, memoised, takes a few thousand), so reaching it means a history too wide to
judge, which is said as such, never taken for a pass."""


LAST_SHOWN = 4
"""How many calls of the longest order an account shows (the last ones, where it stopped)."""


@dataclass(frozen=True)
class Mismatch:
    """An answer the model cannot give at this point, and the clauses that makes it break."""

    operation: Operation
    cites: tuple[str, ...]
    detail: str
    observed: str
    """The kind of answer it is (`conformance.spec.registry.ANSWERS`), for the readings cited."""


Step = Callable[[M, Operation], Mismatch | None]
"""Apply one operation to the model in place; None when the model explains its answer."""


class HistoryTooWide(Exception):
    """A stretch of overlapping calls too wide to search within `MAX_TRIES`."""


@dataclass
class Configuration(Generic[M]):
    """A model state the history so far can have left, with the unknown calls not yet placed."""

    model: M
    pending: frozenset[int] = frozenset()


@dataclass
class Verdict(Generic[M]):
    """What the search found: the states the history may have left, or why none explains it."""

    configurations: list[Configuration[M]]
    mismatches: list[Mismatch] = field(default_factory=list)
    placed: tuple[Operation, ...] = ()
    """The longest order found before the stretch no order explains."""
    tries: int = 0

    @property
    def ok(self) -> bool:
        return bool(self.configurations)

    @property
    def cites(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(cite for m in self.mismatches for cite in m.cites))

    @property
    def observed(self) -> str | None:
        """The kind of the first answer blamed, which a declared alternative may allow."""
        return self.mismatches[0].observed if self.mismatches else None

    def explanation(self) -> str:
        if self.ok:
            return (
                f"explained ({len(self.configurations)} possible end state(s), {self.tries} tries)"
            )
        shown = [describe(operation) for operation in self.placed[-LAST_SHOWN:]]
        earlier = len(self.placed) - len(shown)
        order = "; ".join([f"{earlier} call(s) before", *shown] if earlier else shown) or "(none)"
        lines = [
            "no order of the overlapping calls, consistent with when each began and ended, "
            "explains every answer",
            f"the longest order of them that did: {order}",
            "no call could come next:",
            *(f"  - {mismatch.detail}" for mismatch in self.mismatches),
        ]
        return "\n".join(lines)


def describe(operation: Operation) -> str:
    """One call as a person reads it: its name, arguments and answer."""
    arguments = ", ".join(f"{name}={value!r}" for name, value in operation.arguments.items())
    if operation.outcome == "ok":
        answer = "ok" if operation.value is None else f"ok {clipped(repr(operation.value))}"
    else:
        answer = f"refused {operation.error}" if operation.outcome == "fail" else "unknown"
    return f"{operation.operation}({arguments}) -> {answer}"


def clipped(text: str, most: int = 100) -> str:
    """A value as an account shows it: its start, so that a long one does not hide the rest."""
    return text if len(text) <= most else f"{text[: most - 1]}…"


def stretches(history: Sequence[Operation]) -> Iterator[list[int]]:
    """The history's indices cut where no call overlaps the next (in invocation order)."""
    order = sorted(range(len(history)), key=lambda i: history[i].invoked_ns)
    current: list[int] = []
    end = -1
    for index in order:
        operation = history[index]
        if current and operation.invoked_ns > end:
            yield current
            current, end = [], -1
        current.append(index)
        end = max(end, operation.completed_ns or operation.invoked_ns)
    if current:
        yield current


def linearize(
    history: Sequence[Operation],
    start: M,
    step: Step[M],
    key: Callable[[M], Hashable],
    duplicate: Callable[[M], M] = copy.deepcopy,
    inert: Callable[[Operation], bool] = lambda operation: False,
    alike: Callable[[Operation], Hashable] = lambda call: repr(
        (call.operation, call.arguments, call.outcome, call.value, call.error, call.clock)
    ),
) -> Verdict[M]:
    """Search the whole history from `start`; `key` tells two model states apart, `duplicate`
    copies one before a try, `inert` tells a call that never changes the model wherever it is
    placed (a refusal, a read), `alike` two calls whose effects differ at most in names the
    implementation chose, which no other call of the stretch can know."""
    configurations = [Configuration(start)]
    tries = 0
    for stretch in stretches(history):
        search = _Stretch(history, stretch, step, key, duplicate, inert, alike)
        ended = _distinct((c for c in configurations for c in search.ends(c)), key)
        tries += search.tries
        if not ended:
            return Verdict([], search.culprits(), search.deepest_order, tries)
        configurations = ended
    return Verdict(configurations, tries=tries)


def _distinct(
    configurations: Iterator[Configuration[M]], key: Callable[[M], Hashable]
) -> list[Configuration[M]]:
    seen: dict[tuple[Hashable, frozenset[int]], Configuration[M]] = {}
    for configuration in configurations:
        seen.setdefault((key(configuration.model), configuration.pending), configuration)
    return list(seen.values())


class _Stretch(Generic[M]):
    """The depth-first search of one stretch of overlapping calls."""

    def __init__(
        self,
        history: Sequence[Operation],
        stretch: list[int],
        step: Step[M],
        key: Callable[[M], Hashable],
        duplicate: Callable[[M], M],
        inert: Callable[[Operation], bool],
        alike: Callable[[Operation], Hashable],
    ) -> None:
        self.history = history
        self.duplicate = duplicate
        self.inert = inert
        self.alike = alike
        self.definite = frozenset(i for i in stretch if history[i].outcome != "info")
        self.unknown = frozenset(i for i in stretch if history[i].outcome == "info")
        self.step = step
        self.key = key
        self.tries = 0
        self.visited: set[tuple[frozenset[int], frozenset[int], Hashable]] = set()
        self.twin_before = self._twins(stretch)
        self.deepest_order: tuple[Operation, ...] = ()
        self.deepest_mismatches: list[Mismatch] = []
        self.placed_somewhere: set[int] = set()
        self.latest_mismatch: dict[int, tuple[int, Mismatch]] = {}
        """Each call's mismatch at the deepest point it was tried, with that depth."""

    def ends(self, configuration: Configuration[M]) -> Iterator[Configuration[M]]:
        """Every configuration the stretch can end in, from one it can start in."""
        open_calls = configuration.pending | self.unknown
        yield from self._search(configuration.model, frozenset(), open_calls, ())

    def _search(
        self,
        model: M,
        placed: frozenset[int],
        unknown: frozenset[int],
        order: tuple[int, ...],
    ) -> Iterator[Configuration[M]]:
        state = self.key(model)
        memo = (placed, unknown, state)
        if memo in self.visited:
            return
        self.visited.add(memo)
        if placed >= self.definite:
            yield Configuration(model, unknown)
        mismatches: list[Mismatch] = []
        for index in self._ready(placed, unknown):
            trial = self._try(model, index, mismatches, len(placed))
            if trial is None:
                continue
            following = (trial, placed | {index}, unknown - {index}, (*order, index))
            if index in self.definite and self.inert(self.history[index]):
                # It changes nothing wherever it goes: placing it now loses no order (it only
                # frees others), so no other call is tried in its place.
                yield from self._search(*following)
                return
            yield from self._search(*following)
        self._note_dead_end(placed, order, mismatches)

    def _try(self, model: M, index: int, mismatches: list[Mismatch], depth: int) -> M | None:
        """The model after the call took effect next, or None (its mismatch noted) if it can't.
        A call is blamed for its mismatch at the deepest point it was tried: the latest it
        could have taken effect, with the most of what may justify its answer before it (a
        retry refused as completed is judged after the completion it overlapped, not before)."""
        self.tries += 1
        if self.tries > MAX_TRIES:
            raise HistoryTooWide(f"more than {MAX_TRIES} tries for {len(self.definite)} calls")
        trial = self.duplicate(model)
        mismatch = self.step(trial, self.history[index])
        if mismatch is not None:
            mismatches.append(mismatch)
            if depth > self.latest_mismatch.get(index, (-1, mismatch))[0]:
                self.latest_mismatch[index] = (depth, mismatch)
            return None
        self.placed_somewhere.add(index)
        return trial

    def _ready(self, placed: frozenset[int], unknown: frozenset[int]) -> list[int]:
        """Calls that may take effect next: every definite call that finished before one began
        is placed before it; an unknown call may take effect whenever it has begun."""
        waiting = self.definite - placed
        return sorted(
            index
            for index in waiting | unknown
            if self.twin_before.get(index) not in waiting | unknown
            and not any(self.history[other].surely_before(self.history[index]) for other in waiting)
        )

    def _twins(self, stretch: list[int]) -> dict[int, int]:
        """Each call's twin placed before it: a call alike (`alike`) with the same calls surely
        before and after it. Twins are interchangeable, so only orders that place them in index
        order are tried (twelve identical usages: twelve tries, not 2^12). Names one of them
        chose cannot matter to a call placed between them: a call that knows a name began after
        the call that made it ended, so after both twins."""
        last: dict[str, int] = {}
        twins: dict[int, int] = {}
        for index in sorted(stretch):
            key = self._likeness(index, stretch)
            if key in last:
                twins[index] = last[key]
            last[key] = index
        return twins

    def _likeness(self, index: int, stretch: list[int]) -> str:
        call = self.history[index]
        before = sorted(i for i in stretch if self.history[i].surely_before(call))
        after = sorted(i for i in stretch if call.surely_before(self.history[i]))
        return repr((self.alike(call), before, after))

    def culprits(self) -> list[Mismatch]:
        """Why no order explains the stretch. First the calls no order could place at any
        point, and among them those accepted, when there are such: a refusal changes nothing,
        so one that nothing justifies is most often the echo of an acceptance that no order
        can place (a heartbeat that renewed under a generation the model cannot give, then a
        publish refused as stale). Else the calls that could not come next at the deepest
        point any order reached."""
        never = [m for i, (_, m) in self.latest_mismatch.items() if i not in self.placed_somewhere]
        accepted = [m for m in never if m.operation.outcome == "ok"]
        return accepted or never or self.deepest_mismatches

    def _note_dead_end(
        self, placed: frozenset[int], order: tuple[int, ...], mismatches: list[Mismatch]
    ) -> None:
        """Keep the mismatches of the deepest point any order reached (ties: the first)."""
        if placed >= self.definite or not mismatches:
            return
        if len(order) > len(self.deepest_order) or not self.deepest_mismatches:
            self.deepest_order = tuple(self.history[i] for i in order)
            self.deepest_mismatches = mismatches
