"""What names a scenario in results, expectations and reports: its inventory entry, its key,
and the digest of an inventory of keys.

On their own, below the inventory (which reads the feature files), the property catalogue (whose
records are scenarios too) and the results stream, which all name scenarios this way: each of
them importing the others for it made a circle.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from conformance.spec.registry import CRITERION_TAG


@dataclass(frozen=True)
class ScenarioEntry:
    """One runnable scenario: a plain scenario, or one example row of an outline."""

    key: str
    feature_file: str
    feature: str
    name: str
    line: int
    tags: tuple[str, ...]
    example: str | None

    @property
    def criteria(self) -> tuple[str, ...]:
        return tuple(tag for tag in self.tags if CRITERION_TAG.fullmatch(tag))


def scenario_key(feature_file: str, name: str, example: str | None) -> str:
    """The stable name of a scenario in results, expectations and reports."""
    base = f"{feature_file}::{name}"
    return f"{base}[{example}]" if example is not None else base


def inventory_digest(keys: list[str]) -> str:
    """One digest for a set of keys, whatever their order (a header's provenance, a part's)."""
    return "sha256:" + hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()
