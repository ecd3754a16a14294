"""Who ran what, where: the provenance a results stream's header records.

A verdict is only worth as much as the knowledge of what produced it: which
kit (version, commit, and a digest of every feature file, step module and
registry file, since a checkout can be edited without a commit), which
implementation (its command, what it said of itself, and a digest of the
files its command names, since a name says nothing of the build), and which
machine and interpreter.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import json
import platform
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Final

KIT_ROOT: Final = Path(__file__).resolve().parents[2]
SUITE_FILES: Final = (
    "conformance/features/*.feature",
    "conformance/steps/**/*.py",
    "conformance/**/*.py",
    "conformance/data/**/*",
    "conformance/schemas/**/*.json",
    "conformance/suite.ini",
    "conftest.py",
    "pyproject.toml",
)
"""Relative to KIT_ROOT: the checkout, or site-packages for an installed kit (which has no
conftest.py or pyproject.toml to hash)."""
IN_PROCESS_PACKAGES: Final = {
    "reference": ("reference",),
    "mutant": ("reference", "mutants"),
    "variant": ("reference", "variants"),
}
IMPLEMENTATION_FOLDERS: Final = tuple(
    sorted({f for fs in IN_PROCESS_PACKAGES.values() for f in fs})
)
"""Inside the package, but not the suite: what runs in-process is the implementation's, and
decides no verdict of another implementation's run."""


BUILD_INFO_NAME: Final = "build.json"
"""What a wheel's build records beside the package's modules (setup.py): version and commit."""
BUILD_COMMIT: Final = "CONFORMANCE_BUILD_COMMIT"
"""The commit a build records when it is made from a copy of a checkout (an exported tree, a
source archive) that has no repository to ask; unset, the build asks the tree it is made from."""


def kit_commit(root: Path = KIT_ROOT) -> str | None:
    """The checkout's commit, `-dirty` when tracked files differ from it; outside git, the
    commit an installed wheel was built from; None when neither says."""
    if not (root / ".git").exists():
        return built_commit(root)
    try:
        head = _git(root, "rev-parse", "HEAD")
        dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("-dirty" if dirty else "")


BUILD_RELEASE: Final = "CONFORMANCE_BUILD_RELEASE"
"""What a build records as its release state, where it is told (scripts/release.py builds a
release's wheel before it makes the tag); unset, the build asks the tree (`release_state`)."""
RELEASE_TAG: Final = "v[0-9]*"
"""What a release tag looks like (scripts/release.py makes them)."""


def release_state(root: Path = KIT_ROOT) -> str:
    """Whether this build is a tagged release, a commit after one, or a commit with no release
    in its history; and what the CHANGELOG holds unreleased. Asked of the checkout, or read
    from what the wheel's build recorded."""
    if not (root / ".git").exists():
        return _built_record(root).get("release") or "release unknown (built without a record)"
    return f"{_tagged(root)}; {unreleased_changes(root / 'CHANGELOG.md')}"


def _tagged(root: Path) -> str:
    try:
        tag = _git(root, "describe", "--tags", "--exact-match", "--match", RELEASE_TAG)
        changed = _git(root, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        pass
    else:
        return (
            f"not a release: {tag} with changes not committed" if changed else f"the release {tag}"
        )
    try:
        described = _git(root, "describe", "--tags", "--match", RELEASE_TAG)
    except (OSError, subprocess.CalledProcessError):
        return "not a release: no release tag in its history, so pin the commit (docs/ci.md)"
    tag, after, _ = described.rsplit("-", 2)
    return f"not a release: {after} commit(s) after {tag}, so pin the commit (docs/ci.md)"


def unreleased_changes(changelog: Path) -> str:
    """How many changes the CHANGELOG lists as unreleased, and how many of them can change a
    verdict (an entry says so in those words)."""
    try:
        text = changelog.read_text(encoding="utf-8")
    except OSError:
        return "unreleased changes unknown (no CHANGELOG)"
    start = text.find("## Unreleased")
    if start < 0:
        return "no unreleased changes"
    end = text.find("\n## ", start + 1)
    section = text[start : end if end >= 0 else len(text)]
    entries = re.split(r"(?m)^- ", section)[1:]
    verdicts = sum(
        1 for entry in entries if "can change a verdict" in " ".join(entry.split()).lower()
    )
    if not entries:
        return "no unreleased changes"
    return f"{len(entries)} unreleased change(s), {verdicts} of which can change a verdict"


def _built_record(root: Path) -> dict[str, str]:
    try:
        record = json.loads((root / "conformance" / BUILD_INFO_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def built_commit(root: Path = KIT_ROOT) -> str | None:
    """The commit recorded in `conformance/build.json` when the wheel was built; None for a
    kit not installed from a wheel, or one whose record cannot be read."""
    commit = _built_record(root).get("commit")
    return commit if isinstance(commit, str) and commit else None


def suite_digests(root: Path = KIT_ROOT) -> dict[str, str]:
    """The SHA-256 of every file that decides a verdict: features, steps, registry, schemas,
    the harness's own code and the pytest configuration."""
    files = sorted({path for pattern in SUITE_FILES for path in root.glob(pattern)})
    return {
        path.relative_to(root).as_posix(): file_digest(path)
        for path in files
        if path.is_file()
        and "__pycache__" not in path.parts
        and not _implementation_file(root, path)
    }


def _implementation_file(root: Path, path: Path) -> bool:
    """A wheel holds the linked folders as real ones, which `conformance/**` would reach."""
    return any(path.is_relative_to(root / "conformance" / name) for name in IMPLEMENTATION_FOLDERS)


def implementation_digests(impl: str) -> dict[str, str]:
    """Digests of what the implementation is made of, where the kit can find it: the files an
    `exec:` command names (its program, scripts, a `-m` module), or the in-process packages."""
    kind, _, rest = impl.partition(":")
    if kind == "exec":
        try:
            return {str(path): file_digest(path) for path in _files_named(shlex.split(rest))}
        except ValueError:
            return {}
    if kind == "python":
        module = _module_file(rest.partition(":")[0])
        return {} if module is None else {str(module): file_digest(module)}
    packages = IN_PROCESS_PACKAGES.get(kind, ())
    return {f"{name}/": tree_digest(KIT_ROOT / "conformance" / name) for name in packages}


def machine() -> dict[str, str]:
    return {
        "host": platform.node(),
        "os": platform.platform(),
        "python": platform.python_version(),
    }


def file_digest(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def tree_digest(folder: Path) -> str:
    """One digest over a package's source files, their paths included."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        if "__pycache__" not in path.parts:
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return "sha256:" + digest.hexdigest()


def _files_named(argv: list[str]) -> Iterable[Path]:
    if not argv:
        return
    program = shutil.which(argv[0])
    if program is not None:
        yield Path(program).resolve()
    for previous, argument in itertools.pairwise(argv):
        if previous == "-m":
            module = _module_file(argument)
            if module is not None:
                yield module
        elif "/" in argument or Path(argument).suffix:
            path = Path(argument)
            if path.is_file():
                yield path.resolve()


def _module_file(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        return None
    return Path(spec.origin).resolve()


def _git(root: Path, *arguments: str) -> str:
    completed = subprocess.run(
        ["git", "-C", str(root), *arguments], capture_output=True, text=True, check=True
    )
    return completed.stdout.strip()
