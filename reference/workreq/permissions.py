"""Permission sets and the narrowing rule: a derived grant may only shrink.

Tool grants and device grants are checked separately, so holding a tool never
stands in for a device of the same name.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.reference.errors import PermissionEscalation


@dataclass(frozen=True)
class PermissionSet:
    tools: frozenset[str] = frozenset()
    devices: frozenset[str] = frozenset()

    @classmethod
    def from_lists(cls, tools: list[str], devices: list[str]) -> PermissionSet:
        return cls(frozenset(tools), frozenset(devices))

    def tool_list(self) -> list[str]:
        return sorted(self.tools)

    def device_list(self) -> list[str]:
        return sorted(self.devices)

    def beyond(self, held: PermissionSet) -> PermissionSet:
        """The grants in this set that `held` lacks."""
        return PermissionSet(self.tools - held.tools, self.devices - held.devices)

    def is_empty(self) -> bool:
        return not self.tools and not self.devices


def ensure_narrowing(requested: PermissionSet, held: PermissionSet) -> None:
    """Refuse a requested set that is not a subset of the originator's own set."""
    excess = requested.beyond(held)
    if not excess.is_empty():
        raise PermissionEscalation(
            f"the originator lacks tools {excess.tool_list()} and devices {excess.device_list()}"
        )
