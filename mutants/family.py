"""The mutants as the kit finds them: pyproject.toml names this family as an entry point, so
that the harness (conformance/) never imports this package (conformance.implementations)."""

from __future__ import annotations

from conformance.implementations import Family
from conformance.mutants import MUTANTS, Mutant, driver_on, open_mutant

FAMILY: Family[Mutant] = Family("mutant", MUTANTS, open_mutant, driver_on)
