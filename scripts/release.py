"""Make a release of the kit: its CHANGELOG entry, the checks, the wheel, the tag.

    .venv/bin/python scripts/release.py prepare 0.2.0
        The notes under "Unreleased" in CHANGELOG.md become the entry of 0.2.0, headed with
        what the release checks (protocol version and spec hashes, as `conformance --version`
        prints them), and pyproject.toml's version becomes 0.2.0. Review both and commit them.

    .venv/bin/python scripts/release.py publish [--dry-run] [--skip-tests]
        On a clean tree: the entry of pyproject's version must exist and name what this tree
        checks; ruff, mypy and the test command must pass (--skip-tests: not the test command);
        the wheel is built into dist/ and must record that version and this commit; then the
        annotated tag v<version> is made (--dry-run: everything but the tag).

What a user pins is the tag: the Action (`uses: <repo>@v<version>`) and the package, installed
from the tag (`git+https://...@v<version>`) or from the wheel attached to its GitHub release
(docs/ci.md). Push the tag and attach the wheel yourself: the script never pushes.

Exit codes: 0 done; 1 a check failed; 2 the tree, the version or the CHANGELOG is not ready
(nothing was written).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
CHANGELOG: Final = ROOT / "CHANGELOG.md"
PYPROJECT: Final = ROOT / "pyproject.toml"
DIST: Final = ROOT / "dist"
BIN: Final = Path(sys.executable).parent
UNRELEASED: Final = "## Unreleased"
VERSION: Final = re.compile(r"\d+\.\d+\.\d+")
CHECKS: Final = (("ruff", "check", "."), ("ruff", "format", "--check", "."), ("mypy",))
TEST_COMMAND: Final = ("pytest", "-n", "auto", "--cov", "--cov-fail-under=90")
"""The test command, exactly as .ci/run and the README give it."""
UNRELEASED_TEMPLATE: Final = f"""{UNRELEASED}

Add a line here for each change a user of the kit would notice, under Added, Changed
(say whether it can change a verdict), Fixed or Removed.

"""


class NotReady(Exception):
    """The tree, the version or the CHANGELOG is not ready for the step asked (exit 2)."""


class CheckFailed(Exception):
    """A check, the build or the wheel's record failed (exit 1)."""


def main(argv: list[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    try:
        if arguments.step == "prepare":
            prepare(arguments.version)
        else:
            publish(dry_run=arguments.dry_run, skip_tests=arguments.skip_tests)
    except NotReady as error:
        print(f"release: not ready: {error}", file=sys.stderr)
        return 2
    except CheckFailed as error:
        print(f"release: failed: {error}", file=sys.stderr)
        return 1
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    prepare_step = steps.add_parser("prepare", help="write the CHANGELOG entry and the version")
    prepare_step.add_argument("version", help="the new version, MAJOR.MINOR.PATCH")
    publish_step = steps.add_parser("publish", help="check, build the wheel and tag")
    publish_step.add_argument("--dry-run", action="store_true", help="everything but the tag")
    publish_step.add_argument(
        "--skip-tests", action="store_true", help="do not run the test command (lint still runs)"
    )
    return parser


def prepare(version: str) -> None:
    """The Unreleased notes as the new version's entry, and pyproject's version set to it."""
    if not VERSION.fullmatch(version):
        raise NotReady(f"{version!r} is not MAJOR.MINOR.PATCH")
    text = CHANGELOG.read_text(encoding="utf-8")
    if entry_of(text, version) is not None:
        raise NotReady(f"CHANGELOG.md already has an entry for {version}")
    notes = _unreleased_notes(text)
    if not notes:
        raise NotReady("nothing under 'Unreleased' in CHANGELOG.md to release")
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    entry = f"## {version} ({today})\n\n{checks_block()}\n{notes}\n\n"
    start, end = _section_span(text, UNRELEASED)
    updated = text[:start] + UNRELEASED_TEMPLATE + entry + text[end:]
    project = PYPROJECT.read_text(encoding="utf-8")
    bumped, count = re.subn(r'(?m)^version = "[^"]*"$', f'version = "{version}"', project, count=1)
    if count != 1:
        raise NotReady('pyproject.toml has no `version = "..."` line')
    CHANGELOG.write_text(updated, encoding="utf-8")
    PYPROJECT.write_text(bumped, encoding="utf-8")
    print(f"prepared {version}: review CHANGELOG.md and pyproject.toml, commit, then publish")


def publish(*, dry_run: bool, skip_tests: bool) -> None:
    """Everything is checked before anything is built; the tag comes last."""
    version = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["version"]
    tag = f"v{version}"
    _ready_to_publish(version, tag)
    for check in (*CHECKS, *(() if skip_tests else (TEST_COMMAND,))):
        _check(check)
    wheel = build_wheel(version, tag)
    commit = _git("rev-parse", "HEAD")
    recorded = wheel_record(wheel)
    if recorded != {"version": version, "commit": commit, "release": f"the release {tag}"}:
        raise CheckFailed(f"{wheel.name} records {recorded}, not version {version} at {commit}")
    print(f"built {wheel.relative_to(ROOT)}: version {version}, commit {commit}")
    if dry_run:
        print(f"dry run: the tag {tag} was not made")
        return
    entry = entry_of(CHANGELOG.read_text(encoding="utf-8"), version) or ""
    _git("tag", "-a", tag, "-m", f"conformance kit {version}\n\n{entry}")
    print(f"tagged {tag}; now: git push origin {tag}, and attach {wheel.name} to its release")


def _ready_to_publish(version: str, tag: str) -> None:
    if _git("status", "--porcelain", "--untracked-files=no"):
        raise NotReady("the tree has uncommitted changes: a release is built from a commit")
    if _git("tag", "--list", tag):
        raise NotReady(f"the tag {tag} exists already: prepare a new version")
    entry = entry_of(CHANGELOG.read_text(encoding="utf-8"), version)
    if entry is None:
        raise NotReady(f"CHANGELOG.md has no entry for {version} (scripts/release.py prepare)")
    if checks_block() not in entry:
        raise NotReady(
            f"the CHANGELOG entry of {version} does not name what this tree checks; it must "
            f"hold, as `conformance --version` prints it:\n{checks_block()}"
        )


def checks_block() -> str:
    """What the release checks, as `conformance --version` says it (its protocol and spec
    lines: the version, commit and build lines left out), in a fenced block."""
    lines = [
        line
        for line in _kit_output("--version").splitlines()
        if line.startswith(("protocol ", "spec "))
    ]
    return "What it checks (`conformance --version` prints the same):\n\n```text\n" + (
        "\n".join(lines) + "\n```\n"
    )


def entry_of(changelog: str, version: str) -> str | None:
    """The text of a version's entry (its heading is `## <version> (<date>)`), or None."""
    match = re.search(rf"(?m)^## {re.escape(version)} \(", changelog)
    if match is None:
        return None
    start, end = _section_span(
        changelog, changelog[match.start() : changelog.index("\n", match.start())]
    )
    return changelog[start:end]


def _section_span(text: str, heading: str) -> tuple[int, int]:
    """Where a `## ` section starts (its heading) and ends (the next `## ` heading)."""
    start = text.find(f"{heading}\n")
    if start < 0:
        raise NotReady(f"CHANGELOG.md has no '{heading}' section")
    following = text.find("\n## ", start + len(heading))
    return start, len(text) if following < 0 else following + 1


def _unreleased_notes(text: str) -> str:
    """The Unreleased section's lines past its heading and the template's guidance."""
    start, end = _section_span(text, UNRELEASED)
    body = text[start + len(UNRELEASED) : end].strip()
    guidance = UNRELEASED_TEMPLATE.removeprefix(UNRELEASED).strip()
    return body.removeprefix(guidance).strip()


def build_wheel(version: str, tag: str) -> Path:
    """The wheel, built from this tree into dist/ (build/ first emptied: no stale module),
    recording itself as the release `tag`, which is made once it is checked."""
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    for stale in DIST.glob(f"*-{version}-*.whl"):
        stale.unlink()
    _check(
        (str(Path(sys.executable)), "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(DIST), "."),
        {"CONFORMANCE_BUILD_RELEASE": f"the release {tag}"},
    )
    wheels = sorted(DIST.glob(f"*-{version}-*.whl"))
    if len(wheels) != 1:
        raise CheckFailed(f"the build left {len(wheels)} wheels of {version} in dist/")
    return wheels[0]


def wheel_record(wheel: Path) -> dict[str, object]:
    """What the wheel's build recorded (conformance/build.json, see setup.py)."""
    with zipfile.ZipFile(wheel) as archive:
        try:
            record: dict[str, object] = json.loads(archive.read("conformance/build.json"))
        except KeyError as error:
            raise CheckFailed(f"{wheel.name} holds no conformance/build.json") from error
    return record


def _check(command: tuple[str, ...], environment: dict[str, str] | None = None) -> None:
    program = command[0] if os.sep in command[0] else str(BIN / command[0])
    print(f"release: {' '.join(command)}", flush=True)
    env = {**os.environ, **(environment or {})}
    if subprocess.run([program, *command[1:]], cwd=ROOT, env=env, check=False).returncode != 0:
        raise CheckFailed(f"{' '.join(command)} failed")


def _kit_output(*arguments: str) -> str:
    """The kit of this tree (not an installed one) asked something."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = "from conformance.cli import main; main()"
    completed = subprocess.run(
        [sys.executable, "-c", code, *arguments],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise CheckFailed(f"conformance {' '.join(arguments)}: {completed.stderr.strip()}")
    return completed.stdout


def _git(*arguments: str) -> str:
    completed = subprocess.run(
        ["git", "-C", str(ROOT), *arguments], capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        raise NotReady(f"git {' '.join(arguments)}: {completed.stderr.strip()}")
    return completed.stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
