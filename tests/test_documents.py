"""Documents and code speak to users of the kit as it is; its history lives in git and the
CHANGELOG. So no commit hash and no issue number in the docs, the README, the benches or the
kit's code, and no issue number in the tests; the bench document holds how to measure and the
current figures only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ISSUE_NUMBER = re.compile(r"\bissues? #?\d+\b|\(issue\b", re.IGNORECASE)
COMMIT_HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,12}\b")
"""Seven to twelve hex digits with a letter and a digit among them, standing alone: a short
commit hash (a SHA-256 digest is longer, a colour shorter)."""
BENCH_LINES = 300


def written_for_users() -> Iterator[Path]:
    """The README, the docs but the CHANGELOG, the benches and the kit's own code."""
    yield ROOT / "README.md"
    yield from sorted((ROOT / "docs").glob("*.md"))
    for folder in ("bench", "conformance", "steps", "reference", "mutants", "variants"):
        yield from sorted(path for path in (ROOT / folder).rglob("*.py") if not path.is_symlink())


def the_kit_s_tests() -> Iterator[Path]:
    yield from sorted((ROOT / "tests").rglob("*.py"))


@pytest.mark.parametrize("path", list(written_for_users()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_commit_hash_or_issue_number_in_what_users_read(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = [
        f"{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), start=1)
        if ISSUE_NUMBER.search(line) or COMMIT_HASH.search(line)
    ]
    assert not found, "history belongs to git and the CHANGELOG:\n" + "\n".join(found)


def test_no_issue_number_in_the_tests() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in the_kit_s_tests()
        if path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if ISSUE_NUMBER.search(line)
    ]
    assert not found, "a test says what it holds, not which issue produced it:\n" + "\n".join(found)


def test_the_bench_document_holds_current_figures_only() -> None:
    lines = (ROOT / "docs" / "bench.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= BENCH_LINES, f"docs/bench.md is {len(lines)} lines, at most {BENCH_LINES}"
