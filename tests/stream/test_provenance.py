"""What a user pins: the version, the CHANGELOG and the docs agree, and `--version` says whether
the build is a tagged release or a commit after one, with what is still unreleased."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

from conformance.stream.provenance import release_state, unreleased_changes
from tests.paths import CHECKOUT

ROOT = CHECKOUT
UNRELEASED = """# Changelog

## Unreleased

### Added

- A check. Can change a verdict: one more thing fails.
- A report, which cannot change a verdict.

## 0.1.0 (2026-12-02)

- The first.
"""


def git(tree: Path, *arguments: str) -> None:
    subprocess.run(["git", *arguments], cwd=tree, check=True, capture_output=True)


def a_checkout(tree: Path) -> Path:
    git(tree, "init", "-q")
    (tree / "CHANGELOG.md").write_text(UNRELEASED, encoding="utf-8")
    git(tree, "add", ".")
    git(tree, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "one")
    return tree


def commit_again(tree: Path) -> None:
    git(tree, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x", "--allow-empty")


def test_a_commit_with_no_release_in_its_history_says_to_pin_the_commit(tmp_path: Path) -> None:
    said = release_state(a_checkout(tmp_path))
    assert said.startswith("not a release: no release tag in its history, so pin the commit")
    assert said.endswith("2 unreleased change(s), 1 of which can change a verdict")


def test_a_tagged_commit_is_the_release_and_a_later_one_counts_its_distance(
    tmp_path: Path,
) -> None:
    tree = a_checkout(tmp_path)
    git(tree, "tag", "-a", "v0.1.0", "-m", "0.1.0")
    assert release_state(tree).startswith("the release v0.1.0;")
    commit_again(tree)
    commit_again(tree)
    assert release_state(tree).startswith("not a release: 2 commit(s) after v0.1.0")


def test_an_installed_kit_says_what_its_build_recorded(tmp_path: Path) -> None:
    (tmp_path / "conformance").mkdir()
    (tmp_path / "conformance" / "build.json").write_text('{"release": "the release v0.2.0"}')
    assert release_state(tmp_path) == "the release v0.2.0"
    assert unreleased_changes(tmp_path / "none.md").startswith("unreleased changes unknown")


def test_the_package_s_version_is_the_changelog_s_latest_release_and_the_docs_pin_it() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    released = re.findall(r"(?m)^## (\d+\.\d+\.\d+) \(", (ROOT / "CHANGELOG.md").read_text())
    assert released and released[0] == version
    pinned = set(re.findall(r"@v(\d+\.\d+\.\d+)", (ROOT / "docs" / "ci.md").read_text()))
    assert pinned == {version}, pinned
