"""Faults of an implementation that are not answers: it crashed, hung or spoke garbage."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Protocol, runtime_checkable


class FaultKind(StrEnum):
    CRASH = "crash"
    TIMEOUT = "timeout"
    GARBAGE = "garbage"
    WRONG_SEQ = "wrong_seq"
    SCHEMA_INVALID = "schema_invalid"
    UNUSABLE = "unusable"
    UNCLEAN_RESET = "unclean_reset"
    """The implementation acknowledged `reset` but state of an earlier scenario is still visible."""


class ImplementationFault(Exception):
    """The implementation misbehaved; the scenario gets `errored` or `timeout`, never `failed`."""

    def __init__(self, kind: FaultKind, message: str, stderr_tail: list[str] | None = None) -> None:
        super().__init__(f"{kind.value}: {message}")
        self.kind = kind
        self.message = message
        self.stderr_tail = list(stderr_tail or [])
        self.during: str | None = None
        """What the harness itself was doing, when the call was its own read and no step's
        action (see harness_doing)."""

    def evidence(self) -> str:
        lines = [f"implementation fault ({self.kind.value}): {self.message}"]
        if self.during:
            lines.append(f"while the harness was {self.during}")
        if self.stderr_tail:
            lines.append("last stderr lines:")
            lines.extend(f"  {line}" for line in self.stderr_tail)
        return "\n".join(lines)


@runtime_checkable
class SpeaksOnStderr(Protocol):
    """A driver that keeps the implementation's last stderr lines (a process's, not the port's:
    an in-process implementation has none)."""

    def stderr_tail(self) -> tuple[str, ...]: ...


def stderr_of(driver: object) -> tuple[str, ...]:
    """The implementation's last stderr lines, where its driver keeps them; else none."""
    return driver.stderr_tail() if isinstance(driver, SpeaksOnStderr) else ()


def unusable_cause(error: BaseException) -> str:
    """Why an implementation could not even be described: a fault's evidence, with the last
    stderr lines it printed (garbage at the handshake is often explained there), else the
    error itself."""
    if isinstance(error, ImplementationFault):
        return error.evidence()
    return f"{type(error).__name__}: {error}"


@contextmanager
def harness_doing(purpose: str) -> Iterator[None]:
    """Calls the harness makes for itself (noting what the implementation shows before an
    action, reading it back for a check): a fault inside says so, since the step it falls in
    is then not what failed."""
    try:
        yield
    except ImplementationFault as fault:
        fault.during = fault.during or purpose
        raise
