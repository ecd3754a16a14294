"""This checkout's files as they are now, copied elsewhere, for tests that build or change them.

A build run in the checkout itself writes `build/` and rewrites the `.egg-info` folder beside
`pyproject.toml` while other tests run; a process with the checkout first on its path finds
that folder first and, caught in the middle of the rewrite, no kit entry points at all (the
likely cause of a strength run in CI that ended without a verdict). Builds happen in a copy.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


def copy_of_the_tree(target: Path) -> Path:
    """Every tracked and untracked, not ignored, file of the checkout (links as links) copied
    into `target`, without the repository itself."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        source = CHECKOUT / name
        if source.is_symlink() or source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name, follow_symlinks=False)
    return target
