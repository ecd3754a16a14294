"""A mutant: the reference broken in one realistic way, which its own criterion must catch."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from conformance.adapters.patched import Capability, Patch, declaring_readings, describe_patches
from conformance.driver import Description


@dataclass(frozen=True)
class Mutant:
    """One deliberately broken variant of the reference, violating `criterion`.

    `patches` is called when a driver opens, so a mutant may read its
    configuration (an environment variable, say) at that moment.
    """

    name: str
    criterion: str
    capability: Capability
    description: str
    patches: Callable[[], Sequence[Patch]]
    readings: Mapping[str, str] = field(default_factory=dict)
    """Readings it declares in its handshake: a legal variant broken, judged by what it reads."""

    @property
    def kind(self) -> str:
        return "mutant"

    def declared(self, description: Description) -> Description:
        """A mutant declares what the reference declares, and the readings it names."""
        return declaring_readings(description, self.readings)

    def how(self) -> str:
        return describe_patches(self.patches())
