"""Expectation files: an implementation's known failures, each with the issue that tracks it.

docs/expectations.md documents the format for users; in short (TOML)::

    [[expected_failure]]
    scenario = "office_assign_rate_001.feature::A sixth wake is refused"
    issue = "https://tracker.example/123"
    reason = "gate placed before coalescing"

A property check's failure is what one search found; `[search] seed = N` names that search, and
a run given the file repeats it (unless told `--seed`), so a listed counterexample is met again
on every run instead of coming and going with a new seed.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

PROPERTY_PREFIX = "properties/"
"""How a property check's record key begins."""


class ExpectationsError(Exception):
    """The expectations file is malformed or names a scenario the suite does not have."""


@dataclass(frozen=True)
class ExpectedFailure:
    scenario: str
    issue: str
    reason: str


def load_expectations(path: Path, known_scenarios: Iterable[str]) -> dict[str, ExpectedFailure]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ExpectationsError(f"cannot read expectations file {path}: {error}") from error
    known = set(known_scenarios)
    unknown_tables = sorted(set(data) - {"expected_failure", "search"})
    if unknown_tables:
        raise ExpectationsError(
            f"{path}: unknown table(s) {', '.join(unknown_tables)}: the only ones are "
            "[[expected_failure]] and [search] (a misspelt name would silently expect nothing)"
        )
    _search_seed(path, data)
    expected: dict[str, ExpectedFailure] = {}
    for number, entry in enumerate(data.get("expected_failure", []), start=1):
        missing = {"scenario", "issue"} - set(entry)
        extra = set(entry) - {"scenario", "issue", "reason"}
        if missing or extra:
            problems = [f"lacks {sorted(missing)}"] * bool(missing)
            problems += [f"has unknown keys {sorted(extra)}"] * bool(extra)
            raise ExpectationsError(f"{path}: entry {number} {' and '.join(problems)}")
        if entry["scenario"] not in known:
            raise ExpectationsError(
                f"{path}: entry {number} names unknown scenario {entry['scenario']!r}"
            )
        expected[entry["scenario"]] = ExpectedFailure(
            entry["scenario"], entry["issue"], entry.get("reason", "")
        )
    return expected


def expectations_seed(path: Path) -> int | None:
    """The seed of the search that found the file's property-check failures, if it names one
    (the file is loaded and checked first: `load_expectations`)."""
    return _search_seed(path, tomllib.loads(path.read_text(encoding="utf-8")))


def _search_seed(path: Path, data: dict[str, object]) -> int | None:
    search = data.get("search", {})
    if not isinstance(search, dict) or set(search) - {"seed"}:
        raise ExpectationsError(f"{path}: [search] holds one key, seed: {search!r}")
    seed = search.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
        raise ExpectationsError(f"{path}: [search] seed is a whole number from 0: {seed!r}")
    return seed


def render_expectations(failures: Iterable[ExpectedFailure], seed: int | None = None) -> str:
    """The TOML text of an expectations file (stable order, so diffs stay small), naming the
    search that found its property-check failures where it lists any."""
    listed = sorted(failures, key=lambda f: f.scenario)
    blocks = ["# Known failures of this implementation; each names the issue that tracks it.\n"]
    if seed is not None and any(f.scenario.startswith(PROPERTY_PREFIX) for f in listed):
        blocks.append(
            "# The property checks' search that found the failures below; a run given this file\n"
            "# repeats it (unless told --seed), so each is met again on every run.\n"
            f"[search]\nseed = {seed}\n"
        )
    for failure in listed:
        blocks.append(
            "[[expected_failure]]\n"
            f"scenario = {_toml_string(failure.scenario)}\n"
            f"issue = {_toml_string(failure.issue)}\n"
            f"reason = {_toml_string(failure.reason)}\n"
        )
    return "\n".join(blocks)


def _toml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
