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

from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import ClassVar, Protocol
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


def declaring_readings(description: Description, readings: Mapping[str, str]) -> Description:
    """The handshake's description naming `readings` too: an alteration judged by them,
    validated as a served implementation's would be (an unregistered reading is refused)."""
    if not readings:
        return description
    named = description.model_dump()
    return Description.model_validate({**named, "readings": {**named["readings"], **readings}})


class Alteration(Protocol):
    """A mutant or a variant: a name, a kind, the patches, and what it declares."""

    @property
    def name(self) -> str: ...

    @property
    def patches(self) -> Callable[[], Sequence[Patch]]: ...

    @property
    def kind(self) -> str: ...

    def declared(self, description: Description) -> Description: ...


class AlterationInForce(RuntimeError):
    """A second altered driver asked for while another's patches are in force in this process."""


class PatchedDriver(InProcessDriver):
    """The in-process reference driver with an alteration's patches in force while it is open.

    One at a time in a process: the patches replace module attributes for the whole process,
    and two drivers open at once would each find the other's patches and, closed out of order,
    leave them in force for whatever runs next.
    """

    in_force: ClassVar[str | None] = None
    """The alteration whose driver is open in this process, if any."""

    def __init__(self, alteration: Alteration, url: str, release: Release = no_release) -> None:
        if PatchedDriver.in_force is not None:
            raise AlterationInForce(
                f"{PatchedDriver.in_force}'s patches are in force in this process: close its "
                f"driver before opening {alteration.kind}:{alteration.name}"
            )
        self._patched = ExitStack()
        self._patched.callback(PatchedDriver._lift)
        PatchedDriver.in_force = f"{alteration.kind}:{alteration.name}"
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

    @staticmethod
    def _lift() -> None:
        PatchedDriver.in_force = None


def open_patched(alteration: Alteration, database: str | None, scratch: Path) -> PatchedDriver:
    """A patched driver on an empty store, like the reference adapter's."""
    url, release = take_store(database)
    try:
        return PatchedDriver(alteration, url, release)
    except BaseException:
        release()
        raise
