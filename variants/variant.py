"""A legal variant: the reference changed only where the spec leaves an implementation free.

Every variant must pass the suite. One that reads a registered interpretation
otherwise names it in `diverges`: its scenarios resting on that reading must
come out `diverged`, never `failed`, and nothing else may be touched. A variant
may declare names of its own in its handshake (`declare`), as an
implementation with other metric or event names would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from conformance.adapters.patched import Capability, Patch, describe_patches
from conformance.driver import Description


@dataclass(frozen=True)
class Variant:
    name: str
    capability: Capability
    description: str
    """The freedom the variant takes, in one line."""
    patches: Callable[[], Sequence[Patch]]
    diverges: frozenset[str] = frozenset()
    """The interpretations it reads otherwise (their scenarios come out `diverged`)."""
    declare: Callable[[Description], Description] | None = None

    @property
    def kind(self) -> str:
        return "variant"

    def declared(self, description: Description) -> Description:
        return description if self.declare is None else self.declare(description)

    def how(self) -> str:
        return describe_patches(self.patches())
