"""The variants as the kit finds them: pyproject.toml names this family as an entry point, so
that the harness (conformance/) never imports this package (conformance.implementations)."""

from __future__ import annotations

from conformance.implementations import Family
from conformance.variants import VARIANTS, Variant, driver_on, open_variant

FAMILY: Family[Variant] = Family("variant", VARIANTS, open_variant, driver_on)
