"""The evidence ledger: what the checks of one record judged, clause by clause.

A verdict is arithmetic over evidence (docs/kit.md, "Verdicts"). So every check, in a
Gherkin step or in a model, leaves a mark here for each clause or reading it cites: it
held, it broke, or it failed on a reading that an alternative explains (diverged, or set
aside under the alternative the implementation declared). The recorder opens one ledger
per pytest item and writes its tallies into the item's records; `conformance.verdicts`
turns the tallies of a whole run into verdicts. A property's thousands of checks stay a
few lines: one tally per cite, not one entry per check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict


class Tally(BaseModel):
    """How the checks of one clause (or reading) came out in one record."""

    model_config = ConfigDict(extra="forbid")

    held: int = 0
    broken: int = 0
    """Failed, and no registered alternative allows the answer observed."""
    diverged: list[str] = []
    """Failed on a reading only: the alternatives (`WR-13=zero-usage-accepted`) that allow the
    answer observed, none of them declared by the implementation."""
    set_aside: int = 0
    """Failed on a reading only, and the implementation declares an alternative that allows
    the answer observed: judged by that reading, so neither a break nor a divergence."""

    def merged(self, other: Tally) -> Tally:
        return Tally(
            held=self.held + other.held,
            broken=self.broken + other.broken,
            diverged=sorted({*self.diverged, *other.diverged}),
            set_aside=self.set_aside + other.set_aside,
        )


@dataclass
class Ledger:
    """The tallies of one record while it runs."""

    tallies: dict[str, Tally] = field(default_factory=dict)

    def _tally(self, cite: str) -> Tally:
        tally = self.tallies.get(cite)
        if tally is None:
            tally = self.tallies[cite] = Tally()
        return tally

    def held(self, cites: Iterable[str]) -> None:
        for cite in cites:
            self._tally(cite).held += 1

    def broken(self, cites: Iterable[str]) -> None:
        for cite in cites:
            self._tally(cite).broken += 1

    def diverged(self, cite: str, alternatives: Iterable[str]) -> None:
        tally = self._tally(cite)
        tally.diverged = sorted({*tally.diverged, *alternatives})

    def set_aside(self, cites: Iterable[str]) -> None:
        for cite in cites:
            self._tally(cite).set_aside += 1

    def snapshot(self) -> dict[str, Tally]:
        return {cite: tally.model_copy() for cite, tally in sorted(self.tallies.items())}

    def since(self, before: Mapping[str, Tally]) -> dict[str, Tally]:
        """What the checks judged after `before` (an earlier snapshot): one step's evidence."""
        moved: dict[str, Tally] = {}
        for cite, tally in sorted(self.tallies.items()):
            old = before.get(cite, Tally())
            step = Tally(
                held=tally.held - old.held,
                broken=tally.broken - old.broken,
                diverged=sorted(set(tally.diverged) - set(old.diverged)),
                set_aside=tally.set_aside - old.set_aside,
            )
            if step != Tally():
                moved[cite] = step
        return moved


_LEDGER: ContextVar[Ledger | None] = ContextVar("evidence_ledger", default=None)


def open_ledger(ledger: Ledger) -> Callable[[], None]:
    """Make `ledger` the one the checks that follow write to; returns what closes it."""
    token = _LEDGER.set(ledger)
    return lambda: _LEDGER.reset(token)


def current_ledger() -> Ledger | None:
    return _LEDGER.get()


def merged_tallies(tallies: Iterable[Mapping[str, Tally]]) -> dict[str, Tally]:
    """Several records' tallies as one, cite by cite."""
    merged: dict[str, Tally] = {}
    for record in tallies:
        for cite, tally in record.items():
            merged[cite] = merged[cite].merged(tally) if cite in merged else tally
    return merged
