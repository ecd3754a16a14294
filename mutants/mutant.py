"""A mutant: the reference broken in one realistic way, which its own criterion must catch."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from conformance.adapters.patched import Capability, Patch, describe_patches
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

    @property
    def kind(self) -> str:
        return "mutant"

    def declared(self, description: Description) -> Description:
        """A mutant declares what the reference declares."""
        return description

    def how(self) -> str:
        return describe_patches(self.patches())
