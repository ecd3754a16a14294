"""A release made as the maintainers make one, in a throwaway copy of this tree.

scripts/release.py prepares a version (the CHANGELOG entry naming what the tree checks, the
version in pyproject.toml), then publishes it: the checks, the wheel, the tag. The wheel it
builds must record the version and the commit, so that an installed kit names them in
`conformance --version`; a dry run makes no tag; a tree, version or entry that is not ready is
refused with exit 2 and nothing written.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.tree_copy import copy_of_the_tree

CHECKOUT = Path(__file__).resolve().parent.parent
VERSION = "9.9.9"
NOTE = "- Added: a release made by tests/test_release.py."
pytestmark = [pytest.mark.cost(seconds=15), pytest.mark.timeout(600)]


def run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    completed = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return completed.stdout


def release(tree: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(tree / "scripts" / "release.py"), *arguments],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This tree's files as they are now (tracked and new), committed in a repository of
    their own."""
    copy = copy_of_the_tree(tmp_path_factory.mktemp("kit"))
    run("git", "init", "-q", "-b", "main", cwd=copy)
    run("git", "add", "-A", cwd=copy)
    git_user = ("-c", "user.name=release test", "-c", "user.email=release@test.invalid")
    run("git", *git_user, "commit", "-q", "-m", "the tree", cwd=copy)
    changelog = copy / "CHANGELOG.md"
    text = changelog.read_text()
    changelog.write_text(text.replace("## Unreleased\n", f"## Unreleased\n\n{NOTE}\n", 1))
    prepared = release(copy, "prepare", VERSION)
    assert prepared.returncode == 0, prepared.stderr
    run("git", *git_user, "commit", "-q", "-am", f"release {VERSION}", cwd=copy)
    return copy


def test_prepare_writes_the_entry_with_what_the_tree_checks(tree: Path) -> None:
    changelog = (tree / "CHANGELOG.md").read_text()
    unreleased, _, released = changelog.partition(f"## {VERSION} (")
    assert "## Unreleased" in unreleased and NOTE not in unreleased
    entry = released.split("\n## ")[0]
    assert NOTE in entry
    identity = run(sys.executable, "-c", "from conformance.cli import main; main()", "--version",
                   cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})  # fmt: skip
    checked = [line for line in identity.splitlines() if line.startswith(("protocol ", "spec "))]
    assert len(checked) == 3
    for line in checked:
        assert f"\n{line}\n" in entry, line
    assert f'version = "{VERSION}"' in (tree / "pyproject.toml").read_text()


def test_a_dry_run_builds_a_wheel_that_names_its_version_and_commit(
    tree: Path, tmp_path: Path
) -> None:
    published = release(tree, "publish", "--dry-run", "--skip-tests")
    assert published.returncode == 0, published.stdout[-2000:] + published.stderr[-2000:]
    commit = run("git", "rev-parse", "HEAD", cwd=tree).strip()
    (wheel,) = (tree / "dist").glob(f"*-{VERSION}-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert json.loads(archive.read("conformance/build.json")) == {
            "version": VERSION,
            "commit": commit,
            "release": f"the release v{VERSION}",
        }
    assert not run("git", "tag", "--list", f"v{VERSION}", cwd=tree).strip()
    installed = tmp_path / "installed"
    run(sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", installed, wheel,
        cwd=tmp_path)  # fmt: skip
    said = run(sys.executable, "-c", "from conformance.cli import main; main()", "--version",
               cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(installed)})  # fmt: skip
    assert said.splitlines()[0] == f"conformance {VERSION} (commit {commit})", said
    assert said.splitlines()[1] == f"build: the release v{VERSION}", said


def test_publishing_tags_the_commit_once(tree: Path) -> None:
    published = release(tree, "publish", "--skip-tests")
    assert published.returncode == 0, published.stdout[-2000:] + published.stderr[-2000:]
    tagged = run("git", "rev-list", "-n", "1", f"v{VERSION}", cwd=tree).strip()
    assert tagged == run("git", "rev-parse", "HEAD", cwd=tree).strip()
    message = run("git", "tag", "-l", "--format=%(contents)", f"v{VERSION}", cwd=tree)
    assert NOTE in message and "protocol v1" in message
    again = release(tree, "publish", "--dry-run", "--skip-tests")
    assert again.returncode == 2 and f"the tag v{VERSION} exists" in again.stderr


@pytest.mark.parametrize(
    ("step", "said"),
    [
        (("prepare", "9.9"), "is not MAJOR.MINOR.PATCH"),
        (("prepare", VERSION), f"already has an entry for {VERSION}"),
    ],
)
def test_a_step_that_is_not_ready_is_refused_and_writes_nothing(
    tree: Path, step: tuple[str, ...], said: str
) -> None:
    before = run("git", "status", "--porcelain", cwd=tree)
    refused = release(tree, *step)
    assert refused.returncode == 2 and said in refused.stderr, refused.stderr
    assert run("git", "status", "--porcelain", cwd=tree) == before


def test_a_dirty_tree_is_not_published(tree: Path) -> None:
    readme = tree / "README.md"
    kept = readme.read_text()
    readme.write_text(kept + "\nan uncommitted line\n")
    try:
        for stale in (tree / "dist").glob("*.whl"):
            stale.unlink()
        refused = release(tree, "publish", "--dry-run", "--skip-tests")
        assert refused.returncode == 2 and "uncommitted changes" in refused.stderr
        assert not list((tree / "dist").glob("*.whl")), "a refused release built a wheel"
    finally:
        readme.write_text(kept)


def test_the_changelog_has_an_entry_for_this_version_and_an_unreleased_section() -> None:
    version = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["project"]["version"]
    changelog = (CHECKOUT / "CHANGELOG.md").read_text()
    assert re.search(rf"(?m)^## {re.escape(version)} \(\d{{4}}-\d\d-\d\d\)$", changelog), version
    assert changelog.index("\n## Unreleased\n") < changelog.index(f"\n## {version} (")
