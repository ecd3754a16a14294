"""A legal variant: the reference changed only where the spec leaves an implementation free.

Every variant must pass the suite. One that reads a registered interpretation
otherwise names the alternative it follows in `readings`: its scenarios resting on that
reading must come out `diverged`, never `failed`, and nothing else may be touched; its
twin that declares the reading in its handshake must pass outright. A variant
may declare names of its own in its handshake (`declare`), as an
implementation with other metric or event names would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from conformance.adapters.patched import Capability, Patch, declaring_readings, describe_patches
from conformance.driver import Description

DECLARING_SUFFIX = "_declared"


@dataclass(frozen=True)
class Variant:
    name: str
    capability: Capability
    description: str
    """The freedom the variant takes, in one line."""
    patches: Callable[[], Sequence[Patch]]
    readings: Mapping[str, str] = field(default_factory=dict)
    """The open questions it reads otherwise, each with the alternative of the register it
    follows. Undeclared, its scenarios resting on them come out `diverged`, on their criteria
    alone; its `declaring` twin names them in its handshake and must pass outright."""
    declare: Callable[[Description], Description] | None = None
    declares_readings: bool = False

    @property
    def kind(self) -> str:
        return "variant"

    @property
    def diverges(self) -> frozenset[str]:
        """The interpretations its run may diverge on: none once it declares its readings."""
        return frozenset() if self.declares_readings else frozenset(self.readings)

    def declared(self, description: Description) -> Description:
        described = description if self.declare is None else self.declare(description)
        return declaring_readings(described, self.readings if self.declares_readings else {})

    def declaring(self) -> Variant:
        """The same variant, naming its readings in its handshake."""
        return replace(self, name=f"{self.name}{DECLARING_SUFFIX}", declares_readings=True)

    def how(self) -> str:
        return describe_patches(self.patches())
