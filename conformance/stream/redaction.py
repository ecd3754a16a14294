"""Keeps the harness's secrets out of stored evidence.

An implementation can print anything, including what it found in its
environment or in the harness's files, and its last stderr lines go into
results.jsonl and junit.xml. So every value of the harness's environment
that could be a secret is replaced by `[redacted $NAME]` in whatever the
harness stores, before anything is cut to length (a cut could otherwise
leave half a secret). So is the password of a URL in that environment.
Values that cannot be secrets are left readable: those of a few well-known
variables and of the variables the kit itself defines (a URL's password in
them is still a secret), short ones, and paths that exist on this machine.
And the identity of the run is never redacted: `keep` takes the
implementation's command as given on the command line, and any value it
spells is no secret (the GitHub Action hands the command over in
CONFORMANCE_IMPL, and its reports must say what they tested).
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
KIT_ENV: Final = frozenset(
    {"CONFORMANCE_IMPL", "CONFORMANCE_CLAIM", "CONFORMANCE_SANDBOX", "CONFORMANCE_ARGS"}
    | {"CONFORMANCE_KIT", "CONFORMANCE_EXIT", "CONFORMANCE_REPORTS", "CONFORMANCE_STORE"}
    | {"CONFORMANCE_REQUEST_TIMEOUT", "CONFORMANCE_EXEC_REUSE", "CONFORMANCE_EXEC_PRELAUNCH"}
)
"""The variables the kit and its GitHub Action define: settings, not secrets. Not every
CONFORMANCE_ name: docs/ci.md has users keep a token in CONFORMANCE_BOT_TOKEN."""
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
        self._pattern = _pattern_of(secrets)

    def keep(self, identity: str) -> None:
        """Never redact `identity` (the implementation's command as given): no value it spells
        is a secret any more."""
        self._names = {s: name for s, name in self._names.items() if s not in identity}
        self._pattern = _pattern_of(self._names)

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


def _pattern_of(secrets: Mapping[str, str]) -> re.Pattern[str] | None:
    """One alternation of the secrets, the longest first, so that no shorter one that it
    contains is replaced inside it."""
    longest_first = sorted(secrets, key=len, reverse=True)
    if not longest_first:
        return None
    return re.compile("|".join(re.escape(value) for value in longest_first))


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
    public = name in KIT_ENV or len(value) < MIN_SECRET_LENGTH or _existing_paths(value)
    return ([] if public else [value]) + _passwords_in(value)


def _passwords_in(value: str) -> list[str]:
    """The password of the value as a URL, and of every URL written in it (a pip requirement
    `name @ git+https://user:token@host/...`)."""
    found = []
    for url in [value, *_URL.findall(value)]:
        with contextlib.suppress(ValueError):
            password = urlsplit(url).password
            if password and len(password) >= MIN_PASSWORD_LENGTH:
                found.append(unquote(password))
    return found


_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")


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
