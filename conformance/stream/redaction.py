"""Keeps the harness's secrets out of stored evidence.

An implementation can print anything, including what it found in its
environment or in the harness's files, and its last stderr lines go into
results.jsonl and junit.xml. So every value of the harness's environment
that could be a secret is replaced by `[redacted $NAME]` in whatever the
harness stores, before anything is cut to length (a cut could otherwise
leave half a secret). So is the password of a URL in that environment.
Values that cannot be secrets are left readable: those of a few well-known
variables, short ones, and paths that exist on this machine.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

PUBLIC_ENV: Final = frozenset(
    {"PATH", "HOME", "PWD", "OLDPWD", "LANG", "LANGUAGE", "TERM", "SHELL", "USER", "LOGNAME"}
    | {"HOSTNAME", "SHLVL", "TMPDIR", "_", "COLUMNS", "LINES", "VIRTUAL_ENV", "PYTHONPATH"}
)
MIN_SECRET_LENGTH: Final = 8
MIN_PASSWORD_LENGTH: Final = 4


class Redactor:
    def __init__(self, environment: Mapping[str, str] | None = None) -> None:
        environment = os.environ if environment is None else environment
        secrets = {
            secret: name
            for name, value in environment.items()
            for secret in _secrets_in(name, value)
        }
        self._names = secrets
        longest_first = sorted(secrets, key=len, reverse=True)
        self._pattern = (
            re.compile("|".join(re.escape(value) for value in longest_first))
            if longest_first
            else None
        )

    def text(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda found: f"[redacted ${self._names[found[0]]}]", text)

    def optional(self, text: str | None) -> str | None:
        return None if text is None else self.text(text)

    def values(self, data: dict[str, Any]) -> dict[str, Any]:
        """A copy of a JSON object with every string in it redacted."""
        return {key: self._value(value) for key, value in data.items()}

    def _value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return self.values(value)
        if isinstance(value, list):
            return [self._value(item) for item in value]
        return value


def masked_url(url: str | None) -> str | None:
    """A database URL with its password hidden, as SQLAlchemy renders it."""
    if url is None:
        return None
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def _secrets_in(name: str, value: str) -> list[str]:
    """The value itself when it may be a secret, and the password of a URL in it, which an
    implementation may print apart from the URL."""
    if name in PUBLIC_ENV or name.startswith("LC_"):
        return []
    found = [value] if len(value) >= MIN_SECRET_LENGTH and not _existing_paths(value) else []
    with contextlib.suppress(ValueError):
        password = urlsplit(value).password
        if password and len(password) >= MIN_PASSWORD_LENGTH:
            found.append(unquote(password))
    return found


def _existing_paths(value: str) -> bool:
    return all(_exists(part) for part in value.split(os.pathsep) if part)


def _exists(part: str) -> bool:
    """Whether a path exists; a part no file system could name (longer than its name limit,
    holding a NUL) is no path, and must never stop the harness reading its environment."""
    try:
        return Path(part).exists()
    except (OSError, ValueError):
        return False


REDACT: Final = Redactor()
"""The harness's own environment, read once when the kit is imported."""
