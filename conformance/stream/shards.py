"""`--shard K/N`: the K-th of N disjoint, stable parts of the inventory, for a CI matrix.

A part is cut from the inventory alone, so every machine of a matrix cuts the same parts from
the same kit, whatever it runs or in which order. The unit is what one pytest item records: a
scenario (an outline's row), or a property check with all of its per-criterion records (they
come from one search and cannot be split). Units go round the parts in turn, the property
checks first (each is a long search: one part in turn gets each), then the scenarios in the
inventory's order, so that every part holds about as many of each.

A part's stream is a whole, verified stream of its own (`Header.shard` names the part and the
inventory it was cut from); `conformance merge` joins the N of them into the stream of one run
(see `merge`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from conformance.spec.scenario_keys import inventory_digest
from conformance.stream.results import Shard

PROPERTY_PREFIX: Final = "properties/"
"""The `feature` of a property's records (see properties.catalogue.RECORD_PREFIX)."""
_SHARD: Final = re.compile(r"(\d+)/(\d+)")


class ShardError(ValueError):
    """A `--shard` that names no part: the message says why."""


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` as (K, N), with 1 <= K <= N."""
    matched = _SHARD.fullmatch(text.strip())
    if matched is None:
        raise ShardError(f"--shard takes K/N (the K-th of N parts, from 1), not {text!r}")
    index, count = int(matched.group(1)), int(matched.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ShardError(f"--shard {text}: K must be from 1 to N, and N at least 1")
    return index, count


def unit_of(key: str) -> str:
    """The pytest item a record comes from: a property's records share their check's unit."""
    if key.startswith(PROPERTY_PREFIX) and key.endswith("]"):
        return key.rsplit("[", 1)[0]
    return key


def units_in_turn(keys: Sequence[str]) -> list[str]:
    """The inventory's units in the order they go round the parts: properties, then scenarios,
    each in the inventory's order."""
    units = list(dict.fromkeys(unit_of(key) for key in keys))
    checks = [unit for unit in units if unit.startswith(PROPERTY_PREFIX)]
    return checks + [unit for unit in units if not unit.startswith(PROPERTY_PREFIX)]


def part_of(keys: Sequence[str], index: int, count: int) -> list[str]:
    """The keys of part `index` of `count`, in the inventory's order."""
    mine = {unit for turn, unit in enumerate(units_in_turn(keys)) if turn % count == index - 1}
    return [key for key in keys if unit_of(key) in mine]


def shard_of(keys: Sequence[str], index: int, count: int) -> Shard:
    """What a part's header says of it: which part, and of which inventory."""
    return Shard(index=index, count=count, inventory=inventory_digest(list(keys)))
