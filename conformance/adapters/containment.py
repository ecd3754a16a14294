"""What an implementation may see of the harness: an allow-listed environment, and with
`--sandbox` nothing else.

The kit runs code it does not control, beside the results it writes. Without a
sandbox the implementation runs as the harness's user: it gets only the
environment variables named here (so the harness's tokens and URLs stay out of
its reach unless passed on purpose with `--pass-env`), but it can read the
harness's files and see its processes. `--sandbox` runs it under bubblewrap: the
file system read-only except its store and a private /tmp, the results
stream, the signing key, well-known credential files and the socket folders
masked, no network, its own PID namespace (it sees no other process, and dies
whole when the harness does), no capabilities.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from conformance.protocol.messages import STORE_ENV
from conformance.scratch import RUN_FOLDER
from conformance.stream.provenance import KIT_ROOT

ALLOWED_ENV: Final = ("PATH", "HOME", "LANG")
"""Given to every implementation, beside TMPDIR and CONFORMANCE_STORE, which the harness sets."""
SANDBOX_TMP: Final = "/tmp"
BWRAP: Final = "bwrap"
EMPTIED: Final = ("/run", "/var/run")
"""Emptied in the sandbox: sockets there (D-Bus, systemd, Docker) lead out of any sandbox."""
CREDENTIALS: Final = (".ssh", ".aws", ".azure", ".config/gcloud", ".config/gh", ".docker")
CREDENTIALS_TOO: Final = (".kube", ".gnupg", ".git-credentials", ".netrc", ".pypirc", ".npmrc")


class SandboxUnavailable(Exception):
    """`--sandbox` was asked for on a machine without bubblewrap."""


@dataclass(frozen=True)
class Containment:
    pass_env: tuple[str, ...] = ()
    """More environment variables to hand over, by name (`--pass-env`)."""
    sandbox: bool = False
    hidden: tuple[Path, ...] = ()
    """Harness files the sandbox masks (the results stream): the implementation sees them empty."""

    def environment(self, store: Path) -> dict[str, str]:
        """The implementation's whole environment."""
        names = (*ALLOWED_ENV, *self.pass_env)
        env = {name: os.environ[name] for name in names if name in os.environ}
        env["TMPDIR"] = SANDBOX_TMP if self.sandbox else str(_private_tmp())
        env[STORE_ENV] = str(store)
        return env

    def command(self, argv: Sequence[str], writable: Sequence[Path]) -> list[str]:
        """`argv`, wrapped in the sandbox when one is asked for; `writable` stay writable."""
        if not self.sandbox:
            return list(argv)
        revealed = [arg for path in _revealed(argv) for arg in ("--ro-bind", str(path), str(path))]
        masks = [arg for path in self._masked() for arg in _mask(path)]
        binds = [arg for path in writable for arg in ("--bind", str(path), str(path))]
        return [
            bwrap_path(),
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--tmpfs", SANDBOX_TMP,
            *revealed,
            *masks,
            *binds,
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--cap-drop", "ALL",
            "--",
            *argv,
        ]  # fmt: skip

    def _masked(self) -> list[Path]:
        """What the sandbox hides: the harness's private files and run folder, well-known
        credentials in HOME, and the socket folders."""
        home = Path.home()
        candidates = [
            *self.hidden,
            RUN_FOLDER.path(),
            *(home / name for name in (*CREDENTIALS, *CREDENTIALS_TOO)),
            *(Path(folder) for folder in EMPTIED if not Path(folder).is_symlink()),
        ]
        return [path.resolve() for path in candidates if path.exists()]


def _revealed(argv: Sequence[str]) -> list[Path]:
    """Folders under /tmp that the private /tmp would hide but the command needs, read-only:
    the working folder, the kit and its interpreter (a checkout or a virtual environment may
    live under /tmp), and the folders of the files the command names."""
    named = [Path(arg).resolve().parent for arg in argv if "/" in arg and Path(arg).exists()]
    candidates = [Path.cwd(), KIT_ROOT, Path(sys.prefix), *named]
    folders = {path.resolve() for path in candidates if path.resolve().is_relative_to(SANDBOX_TMP)}
    return [
        path
        for path in sorted(folders)
        if not any(path.is_relative_to(o) and path != o for o in folders)
    ]


def _mask(path: Path) -> tuple[str, ...]:
    """A folder becomes an empty tmpfs; a file, /dev/null."""
    return ("--tmpfs", str(path)) if path.is_dir() else ("--ro-bind", "/dev/null", str(path))


def bwrap_path() -> str:
    found = shutil.which(BWRAP)
    if found is None:
        raise SandboxUnavailable(
            "--sandbox needs bubblewrap (`bwrap`), which is not on PATH; install it "
            "(Debian: apt-get install bubblewrap) or run without --sandbox"
        )
    return found


def _private_tmp() -> Path:
    folder = RUN_FOLDER.path() / "implementation-tmp"
    folder.mkdir(exist_ok=True)
    return folder
