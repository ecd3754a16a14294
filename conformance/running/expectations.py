"""Expectation files: an implementation's known failures, each with the issue that tracks it.

docs/expectations.md documents the format for users; in short (TOML)::

    [[expected_failure]]
    scenario = "office_assign_rate_001.feature::A sixth wake is refused"
    issue = "https://tracker.example/123"
    reason = "gate placed before coalescing"
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


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
    unknown_tables = sorted(set(data) - {"expected_failure"})
    if unknown_tables:
        raise ExpectationsError(
            f"{path}: unknown table(s) {', '.join(unknown_tables)}: the only one is "
            "[[expected_failure]] (a misspelt name would silently expect nothing)"
        )
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


def render_expectations(failures: Iterable[ExpectedFailure]) -> str:
    """The TOML text of an expectations file (stable order, so diffs stay small)."""
    blocks = ["# Known failures of this implementation; each names the issue that tracks it.\n"]
    for failure in sorted(failures, key=lambda f: f.scenario):
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
