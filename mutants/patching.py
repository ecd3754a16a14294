"""How a mutant is applied: targeted patches on the reference, held for a driver's lifetime.

A mutant never edits a reference file. It names attributes of reference
modules or classes and what to put in their place (a small subclass or a
function); the patches are entered when the driver opens, before the
coordinator is built, and undone when it closes. A restart builds the new
coordinator under the same patches, so a mutant's in-memory state is lost
exactly as the reference's is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from unittest import mock

from conformance.adapters.inprocess import InProcessDriver, empty_store
from conformance.driver import Description


class Capability(StrEnum):
    """The capability whose reference modules a mutant patches, and whose features judge it."""

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


@dataclass(frozen=True)
class Mutant:
    """One deliberately broken variant of the reference.

    `patches` is called when a driver opens, so a mutant may read its
    configuration (an environment variable, say) at that moment.
    """

    name: str
    criterion: str
    capability: Capability
    description: str
    patches: Callable[[], Sequence[Patch]]

    def how(self) -> str:
        """How the mutant is applied, as the patches it installs."""
        return "; ".join(patch.describe() for patch in self.patches())


class MutantDriver(InProcessDriver):
    """The in-process reference driver with a mutant's patches in force while it is open."""

    def __init__(self, mutant: Mutant, url: str) -> None:
        self._patched = ExitStack()
        try:
            for patch in mutant.patches():
                self._patched.enter_context(
                    mock.patch.object(patch.target, patch.attribute, patch.replacement)
                )
            super().__init__(url)
        except BaseException:
            self._patched.close()
            raise
        self.mutant = mutant

    def describe(self) -> Description:
        return super().describe().model_copy(update={"name": f"mutant:{self.mutant.name}"})

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._patched.close()


def open_patched(mutant: Mutant, database: str | None, scratch: Path) -> MutantDriver:
    """A mutant driver on an empty store, like the reference adapter's."""
    url = database or f"sqlite:///{scratch / 'reference.sqlite'}"
    empty_store(url)
    return MutantDriver(mutant, url)
