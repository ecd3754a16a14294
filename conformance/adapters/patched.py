"""The in-process reference with targeted patches in force: how mutants and variants are applied.

Neither a mutant nor a variant edits a reference file. Each names attributes of
reference modules or classes and what to put in their place (a small subclass
or a function); the patches are entered when the driver opens, before the
coordinator is built, and undone when it closes. A restart builds the new
coordinator under the same patches, so in-memory state is lost exactly as the
reference's is. A variant may also change what the implementation declares in
its handshake (its own metric names, say).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol
from unittest import mock

from conformance.adapters.inprocess import InProcessDriver
from conformance.adapters.inprocess_stores import Release, no_release, take_store
from conformance.driver import Description


class Capability(StrEnum):
    """The capability whose reference modules an alteration patches, and whose features judge it."""

    OFFICE = "office"
    WORK_REQUESTS = "work_requests"


@dataclass(frozen=True)
class Patch:
    """Replace `target.attribute` (a module or class attribute) with `replacement`."""

    target: object
    attribute: str
    replacement: object

    def describe(self) -> str:
        owner = getattr(self.target, "__module__", None)
        name = getattr(self.target, "__name__", repr(self.target))
        where = f"{owner}.{name}" if isinstance(self.target, type) and owner else name
        return f"{where}.{self.attribute} := {_name_of(self.replacement)}"


def _name_of(value: object) -> str:
    qualified = getattr(value, "__qualname__", None)
    module = getattr(value, "__module__", None)
    return f"{module}.{qualified}" if qualified and module else repr(value)


def describe_patches(patches: Sequence[Patch]) -> str:
    """How an alteration is applied, as the patches it installs."""
    return "; ".join(patch.describe() for patch in patches)


class Alteration(Protocol):
    """A mutant or a variant: a name, a kind, the patches, and what it declares."""

    @property
    def name(self) -> str: ...

    @property
    def patches(self) -> Callable[[], Sequence[Patch]]: ...

    @property
    def kind(self) -> str: ...

    def declared(self, description: Description) -> Description: ...


class PatchedDriver(InProcessDriver):
    """The in-process reference driver with an alteration's patches in force while it is open."""

    def __init__(self, alteration: Alteration, url: str, release: Release = no_release) -> None:
        self._patched = ExitStack()
        try:
            for patch in alteration.patches():
                self._patched.enter_context(
                    mock.patch.object(patch.target, patch.attribute, patch.replacement)
                )
            super().__init__(url, release=release)
        except BaseException:
            self._patched.close()
            raise
        self.alteration = alteration

    def describe(self) -> Description:
        named = (
            super()
            .describe()
            .model_copy(update={"name": f"{self.alteration.kind}:{self.alteration.name}"})
        )
        return self.alteration.declared(named)

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._patched.close()


def open_patched(alteration: Alteration, database: str | None, scratch: Path) -> PatchedDriver:
    """A patched driver on an empty store, like the reference adapter's."""
    url, release = take_store(database)
    try:
        return PatchedDriver(alteration, url, release)
    except BaseException:
        release()
        raise
