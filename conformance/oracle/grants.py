"""Whether one set of grants lies within another: the narrowing every delegation must keep,
by name as the kit reads it, or case and trailing spaces aside as WR-25's alternative does."""

from __future__ import annotations

from conformance.driver import Permissions


def within(inner: Permissions, outer: Permissions) -> bool:
    """Whether `inner` grants nothing `outer` lacks, tools and devices separately."""
    return inner.tools <= outer.tools and inner.devices <= outer.devices


def folded_within(inner: Permissions, outer: Permissions) -> bool:
    """Whether `inner` grants nothing `outer` lacks when names are compared as WR-25's
    alternative compares them, case and trailing spaces aside."""

    def folded(names: frozenset[str]) -> set[str]:
        return {name.rstrip(" ").lower() for name in names}

    return folded(inner.tools) <= folded(outer.tools) and folded(inner.devices) <= folded(
        outer.devices
    )
