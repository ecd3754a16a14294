"""The `conformance` command: `app`, its commands (one module per group) and `main`, which
turns any fault of the harness into exit code 4 and one line."""

from __future__ import annotations

import sys
import tempfile

from conformance.cli import listings, run, streams, strength
from conformance.cli.common import (
    EXIT_CODES,
    EXIT_CODES_HELP,
    EXIT_FAILURES,
    EXIT_HARNESS,
    EXIT_OK,
    EXIT_UNUSABLE,
    EXIT_USAGE,
    app,
)

__all__ = [
    "EXIT_CODES",
    "EXIT_CODES_HELP",
    "EXIT_FAILURES",
    "EXIT_HARNESS",
    "EXIT_OK",
    "EXIT_UNUSABLE",
    "EXIT_USAGE",
    "app",
    "listings",
    "main",
    "run",
    "streams",
    "strength",
]


def main() -> None:
    """The command, with any exception the harness did not expect turned into exit code 4 and
    one line: Python's own exit code for it, 1, would read as a failed scenario."""
    try:
        app()
    except Exception as error:  # every fault of the harness ends here
        sys.stderr.write(_harness_fault(error) + "\n")
        sys.exit(EXIT_HARNESS)


def _harness_fault(error: Exception) -> str:
    """The one line a harness fault prints, with the traceback kept in a file for a report."""
    import traceback

    cause = " ".join(f"{type(error).__name__}: {error}".split())
    cause = cause if len(cause) <= 200 else cause[:199] + "…"
    line = f"conformance: fault of the harness, no verdict on the implementation: {cause}"
    try:
        with tempfile.NamedTemporaryFile(
            "w", prefix="conformance-fault-", suffix=".txt", delete=False, encoding="utf-8"
        ) as kept:
            kept.write("".join(traceback.format_exception(error)))
    except OSError:
        return line
    return f"{line} (traceback in {kept.name})"
