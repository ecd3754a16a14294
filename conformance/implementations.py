"""Implementations the kit opens by a family's name (`mutant:NAME`, `variant:NAME`), found
through the packages that define them, never imported by name.

The harness must stand without its own strength tests: nothing in conformance/ imports mutants/
or variants/ (features -> steps -> conformance <- adapters -> reference; nothing points back
up). Each of those packages hands its family in as an entry point of the distribution
(pyproject.toml, group FAMILIES), and the kit loads a family when a run, a listing or
`strength` names it; a kit installed without one says so, as a configuration error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Final, Generic, Protocol, TypeVar

from conformance.driver import Driver

FAMILIES: Final = "assign_delegate_conformance.families"
"""The entry-point group: each entry names a family (`mutant`, `variant`) and the object."""


class Mutation(Protocol):
    """What the kit reads of a mutant: the reference broken one way, which its own criterion
    must catch. Its `capability` names the features that judge it (`office`, `work_requests`)."""

    @property
    def name(self) -> str: ...
    @property
    def criterion(self) -> str: ...
    @property
    def capability(self) -> str: ...
    @property
    def description(self) -> str: ...


class Legal(Protocol):
    """What the kit reads of a variant: the reference changed only where the specs leave room,
    which must pass, or diverge on the readings it takes."""

    @property
    def name(self) -> str: ...
    @property
    def capability(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def readings(self) -> Mapping[str, str]: ...
    @property
    def declares_readings(self) -> bool: ...
    @property
    def diverges(self) -> frozenset[str]: ...


M = TypeVar("M")


@dataclass(frozen=True)
class Family(Generic[M]):
    """The named implementations of one kind, as their package hands them in."""

    kind: str
    members: Mapping[str, M]
    open: Callable[[str, str | None, Path], Driver]
    """A driver for a member on an empty store (database URL or None, scratch folder)."""
    driver_on: Callable[[str, str], Driver]
    """A driver for a member on the store at a URL, as it is (a served relaunch)."""

    def unknown(self, name: str) -> str:
        return f"no {self.kind} named {name!r}; known: {', '.join(sorted(self.members))}"


class FamilyMissing(LookupError):
    """No installed package hands in a family of that kind."""


@cache
def family(kind: str) -> Family[Any]:
    """The family of that kind, loaded from its entry point once per process."""
    found = [entry for entry in entry_points(group=FAMILIES) if entry.name == kind]
    if not found:
        raise FamilyMissing(
            f"no {kind}s are installed with this kit (no '{kind}' entry point in the group "
            f"{FAMILIES}); install the kit again: pip install -e ."
        )
    loaded = found[0].load()
    if not isinstance(loaded, Family) or loaded.kind != kind:
        raise FamilyMissing(f"the '{kind}' entry point of {FAMILIES} names no {kind} family")
    return loaded


def mutants() -> Family[Mutation]:
    return family("mutant")


def variants() -> Family[Legal]:
    return family("variant")
