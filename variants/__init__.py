"""Legal variants of the reference: changed only where the specs leave an implementation free.

A kit that fails a correct implementation is as wrong as one that passes a
broken one. Mutants (see `mutants`) prove the suite rejects what breaks a
clause; variants prove it accepts what the text allows: each must pass, or
come out `diverged` on the registered interpretations it names, and nothing
else. Select one with `conformance run --impl variant:<name>` or serve it
with `conformance serve-reference --variant <name>`; `conformance strength`
runs them all beside the mutants.
"""

from __future__ import annotations

from pathlib import Path

from conformance.adapters.patched import PatchedDriver, open_patched
from conformance.variants import (
    instant_precision,
    office_behaviour,
    office_vocabulary,
    workreq_readings,
    workreq_variants,
)
from conformance.variants.variant import Variant

__all__ = ["VARIANTS", "UnknownVariant", "Variant", "driver_on", "open_variant"]

LEGAL: list[Variant] = [
    variant
    for module in (
        office_vocabulary,
        office_behaviour,
        instant_precision,
        workreq_variants,
        workreq_readings,
    )
    for variant in module.VARIANTS
]
VARIANTS: dict[str, Variant] = {
    variant.name: variant for variant in [*LEGAL, *(v.declaring() for v in LEGAL if v.readings)]
}
"""Every variant, and for each that reads an open question otherwise, its declaring twin."""


class UnknownVariant(LookupError):
    """No variant has that name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no variant named {name!r}; known: {', '.join(sorted(VARIANTS))}")


def _variant(name: str) -> Variant:
    try:
        return VARIANTS[name]
    except KeyError:
        raise UnknownVariant(name) from None


def open_variant(name: str, database: str | None, scratch: Path) -> PatchedDriver:
    """A driver for the named variant on an empty store (the in-process adapter's factory)."""
    return open_patched(_variant(name), database, scratch)


def driver_on(name: str, url: str) -> PatchedDriver:
    """A driver for the named variant on the store at `url`, as it is (a served relaunch)."""
    return PatchedDriver(_variant(name), url)
