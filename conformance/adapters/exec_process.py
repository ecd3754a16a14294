"""One launch of an implementation's command, spoken to in protocol v1 lines.

Every read has a deadline: stdout and stderr are drained by daemon threads,
so a silent, chatty, crashed or hung process can never block the harness.
What they hold is bounded: at most a few stdout lines wait (then the reader
stops reading and the process blocks on its full pipe), and only the last
stderr lines are kept, stripped of terminal control sequences. The first
fault kills the process and everything it started (see process_tree); the
process is not trusted again, and every later request reports that earlier
fault.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import shlex
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from enum import Enum
from queue import Empty, Queue
from typing import IO, Any, Final, TypeVar

from conformance.adapters import process_tree
from conformance.adapters.faults import FaultKind, ImplementationFault
from conformance.protocol.codec import (
    Ok,
    ProtocolError,
    ProtocolErrorKind,
    decode_reply,
    encode_request,
)
from conformance.protocol.messages import Args, ErrorReply, NotSupportedReply, Operation
from conformance.stream.redaction import REDACT

R = TypeVar("R")

MAX_LINE_BYTES: Final = 16 * 1024 * 1024
MAX_STDERR_LINE_CHARS: Final = 500
STDERR_READ_BYTES: Final = 64 * 1024
"""How much of one stderr line is read at once: enough that a secret is rarely split."""
DRAIN_SECONDS: Final = 1.0
"""How long to wait for the last stderr lines of a process that exited or was killed."""
REAP_SECONDS: Final = 5.0
STDERR_SETTLE_SECONDS: Final = 2.0
"""How long a live process's stderr lines already written may take to be read, for a failure's
account: the reply that showed the failure came on the other pipe, read by another thread. The
wait ends as soon as nothing is left unread, so only a loaded machine ever waits long."""
STDERR_SETTLE_POLL_SECONDS: Final = 0.001
STDOUT_LINES_WAITING: Final = 2
"""A reply and one unasked line (already a fault) is all a request ever needs to see."""
EXIT_POLL_SECONDS: Final = 0.05
"""How often a wait for a reply checks that the process is still alive."""
_CONTROL: Final = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f]")
"""ANSI escape sequences and the other control characters, which no report can carry."""

_PROTOCOL_FAULTS: Final = {
    ProtocolErrorKind.NOT_JSON: FaultKind.GARBAGE,
    ProtocolErrorKind.NOT_AN_OBJECT: FaultKind.GARBAGE,
    ProtocolErrorKind.UNKNOWN_OP: FaultKind.SCHEMA_INVALID,
    ProtocolErrorKind.WRONG_SEQ: FaultKind.WRONG_SEQ,
    ProtocolErrorKind.SCHEMA_INVALID: FaultKind.SCHEMA_INVALID,
}


class _Signal(Enum):
    EOF = "eof"
    OVERSIZED = "oversized"


class ImplementationProcess:
    """The process, its stdout lines and the tail of its stderr.

    With `validate`, every reply is checked against the shipped JSON Schema.
    Requests are not: they are built from the typed models the schema is
    generated from, and a failure there would be the harness's, not the
    implementation's (the kit's tests check them against the schema instead).
    """

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        stderr_lines: int,
        validate: bool,
        shown_as: Sequence[str] | None = None,
    ) -> None:
        self.command = shlex.join(shown_as or argv)
        """The command as messages show it: the implementation's own, not its sandbox's."""
        self.validate = validate
        self._seq = 0
        self._fault: ImplementationFault | None = None
        self._killed = False
        self._stdout: Queue[bytes | _Signal] = Queue(maxsize=STDOUT_LINES_WAITING)
        self._stderr: deque[str] = deque(maxlen=stderr_lines)
        self._stderr_lock = threading.Lock()
        """Held by the stderr reader from taking bytes off the pipe to keeping their lines: a
        byte the process wrote is in the pipe or in the tail, never between, while it is held."""
        try:
            with process_tree.launching():
                self._popen = subprocess.Popen(
                    list(argv),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=dict(env),
                    start_new_session=True,
                    preexec_fn=process_tree.before_exec(),
                )
                process_tree.register(self._popen.pid)
        except OSError as error:
            raise ImplementationFault(
                FaultKind.UNUSABLE, f"cannot start {self.command}: {error}"
            ) from error
        assert self._popen.stdout is not None and self._popen.stderr is not None
        self._readers = [
            _start_thread(self._read_stdout, self._popen.stdout, "stdout"),
            _start_thread(self._read_stderr, self._popen.stderr, "stderr"),
        ]

    # -- requests -------------------------------------------------------------
    def request(
        self, operation: Operation[Any, R], args: Args, timeout: float
    ) -> Ok[R] | ErrorReply | NotSupportedReply:
        """Send one request and wait at most `timeout` seconds for its reply."""
        if self._fault is not None:
            raise ImplementationFault(
                self._fault.kind,
                f"not sent ({operation.name}): the process was killed after an earlier fault: "
                f"{self._fault.message}",
                list(self._fault.stderr_tail),
            )
        if self._killed:
            raise ImplementationFault(
                FaultKind.CRASH,
                f"not sent ({operation.name}): the harness killed the process and did not "
                "restart it",
                list(self.stderr_tail()),
            )
        self._seq += 1
        what = f"{operation.name} (seq {self._seq})"
        try:
            self._send(encode_request(self._seq, operation, args))
            line = self._receive(what, timeout)
            return decode_reply(line, operation, self._seq, validate=self.validate)
        except ProtocolError as error:
            kind = _PROTOCOL_FAULTS[error.kind]
            raise self._fail(kind, f"reply to {what}: {error.message}") from None

    def send_and_kill(
        self, operation: Operation[Any, R], args: Args, *, after_seconds: float
    ) -> None:
        """Send one request, wait at most `after_seconds` for any reply (not reading it),
        then SIGKILL the process group: a crash the harness causes, not a fault."""
        if self._fault is not None:
            raise ImplementationFault(
                self._fault.kind,
                f"not sent ({operation.name}): the process was killed after an earlier fault",
                list(self._fault.stderr_tail),
            )
        self._seq += 1
        self._send(encode_request(self._seq, operation, args))
        with contextlib.suppress(Empty):
            self._stdout.get(timeout=after_seconds)
        self.kill()

    def _send(self, line: str) -> None:
        stdin = self._popen.stdin
        assert stdin is not None
        try:
            stdin.write(line.encode("utf-8") + b"\n")
            stdin.flush()
        except OSError:
            raise self._fail(FaultKind.CRASH, self._exit_description("before reading")) from None

    def _receive(self, what: str, timeout: float) -> bytes:
        item = self._next_line(what, timeout)
        if item is _Signal.EOF:
            raise self._fail(FaultKind.CRASH, self._exit_description(f"before replying to {what}"))
        if item is _Signal.OVERSIZED:
            raise self._fail(
                FaultKind.GARBAGE, f"reply to {what} is longer than {MAX_LINE_BYTES} bytes"
            )
        assert isinstance(item, bytes)
        return item

    def _next_line(self, what: str, timeout: float) -> bytes | _Signal:
        """The next stdout line; a crash when the process exits first, even if something it
        started still holds its stdout open; a timeout when neither happens in time."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            with contextlib.suppress(Empty):
                return self._stdout.get(timeout=min(left, EXIT_POLL_SECONDS))
            if self._popen.poll() is not None:
                with contextlib.suppress(Empty):  # its last words may still be in the pipe
                    return self._stdout.get(timeout=DRAIN_SECONDS)
                raise self._fail(
                    FaultKind.CRASH,
                    f"the process exited with status {self._popen.returncode} before replying "
                    f"to {what}",
                ) from None
        raise self._fail(FaultKind.TIMEOUT, f"no reply to {what} within {timeout:g} s") from None

    def _exit_description(self, when: str) -> str:
        try:
            code = self._popen.wait(timeout=DRAIN_SECONDS)
        except subprocess.TimeoutExpired:
            return f"the process closed its stdout {when}"
        return f"the process exited with status {code} {when}"

    def _fail(self, kind: FaultKind, message: str) -> ImplementationFault:
        """Kill the process, then record and return the fault with the stderr tail."""
        self.kill()
        self._fault = ImplementationFault(kind, message, list(self.stderr_tail()))
        return self._fault

    # -- lifecycle ------------------------------------------------------------
    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def faulted(self) -> bool:
        return self._fault is not None

    @property
    def alive(self) -> bool:
        return not self._killed and self._popen.poll() is None

    def stderr_tail(self) -> tuple[str, ...]:
        return tuple(self._stderr)

    def settled_stderr_tail(self) -> tuple[str, ...]:
        """The tail once what the process has written so far is read (a killed one's readers
        are drained already): it writes before it answers, but the pipes are read apart. The
        pipe is looked at under the reader's lock, so a line the reader has taken off it is
        already in the tail (see `_read_stderr`)."""
        pipe = self._popen.stderr
        deadline = time.monotonic() + STDERR_SETTLE_SECONDS
        while not self._killed and pipe is not None and time.monotonic() < deadline:
            with self._stderr_lock:
                written = _readable(pipe.fileno(), 0)
            if not written:
                break
            time.sleep(STDERR_SETTLE_POLL_SECONDS)
        return self.stderr_tail()

    def forget_stderr(self) -> None:
        """Start a new tail, so a reused process's evidence shows no earlier scenario's lines."""
        self._stderr.clear()

    def kill(self) -> None:
        """SIGKILL the process and all it started, reap it, let the readers drain.

        Only once: after the process is gone its id may be reused by an unrelated process.
        """
        if self._killed:
            return
        if self._popen.returncode is None:  # not reaped yet, so its pid is still its own
            process_tree.kill_tree(self._popen.pid)
        else:  # it exited by itself; what it left in its group may not have
            process_tree.kill_group(self._popen.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout=REAP_SECONDS)
        self._killed = True
        process_tree.forget(self._popen.pid)
        process_tree.sweep_orphans()
        self._drain_readers()
        self._close_pipes()

    def _drain_readers(self) -> None:
        """Empty the stdout queue until both readers see the end of their pipes, so a reader
        blocked on the full queue finishes too."""
        deadline = time.monotonic() + DRAIN_SECONDS
        while any(reader.is_alive() for reader in self._readers) and time.monotonic() < deadline:
            with contextlib.suppress(Empty):
                while True:
                    self._stdout.get_nowait()
            for reader in self._readers:
                reader.join(timeout=EXIT_POLL_SECONDS)

    def _close_pipes(self) -> None:
        for pipe, reader in zip(
            (self._popen.stdout, self._popen.stderr), self._readers, strict=True
        ):
            if pipe is not None and not reader.is_alive():
                pipe.close()
        if self._popen.stdin is not None:
            with contextlib.suppress(OSError):
                self._popen.stdin.close()

    # -- reader threads -------------------------------------------------------
    def _read_stdout(self, stream: IO[bytes]) -> None:
        while True:
            line = stream.readline(MAX_LINE_BYTES + 1)
            if not line:
                self._stdout.put(_Signal.EOF)
                return
            if len(line) > MAX_LINE_BYTES:
                self._stdout.put(_Signal.OVERSIZED)
                return
            self._stdout.put(line)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        """Straight off the descriptor (a buffered reader would hide bytes from `select`), each
        read and the keeping of its lines under the lock; a line is cut into reads of
        STDERR_READ_BYTES, as before any redaction."""
        descriptor, pending = stream.fileno(), b""
        while True:
            with contextlib.suppress(OSError, ValueError):
                _readable(descriptor, None)
            with self._stderr_lock:
                try:
                    chunk = os.read(descriptor, STDERR_READ_BYTES)
                except OSError:
                    chunk = b""
                *lines, pending = (pending + chunk).split(b"\n")
                if not chunk or len(pending) >= STDERR_READ_BYTES:
                    lines, pending = [*lines, pending] if pending else lines, b""
                for line in lines:
                    self._keep_stderr_line(line)
            if not chunk:
                return

    def _keep_stderr_line(self, raw: bytes) -> None:
        """Cleaned of control sequences and redacted before it is cut to length."""
        text = REDACT.text(_CONTROL.sub("", raw.decode("utf-8", errors="replace")).rstrip())
        self._stderr.append(text[:MAX_STDERR_LINE_CHARS])


def _readable(descriptor: int, timeout_ms: int | None) -> bool:
    """Whether the descriptor has bytes (or its end) to read, waiting up to `timeout_ms` (None:
    until it has). `poll`, not `select`: a descriptor numbered past 1023 is no error here."""
    poller = select.poll()
    poller.register(descriptor, select.POLLIN | select.POLLHUP | select.POLLERR)
    return bool(poller.poll(timeout_ms))


def _start_thread(target: Any, stream: IO[bytes], name: str) -> threading.Thread:
    thread = threading.Thread(target=target, args=(stream,), name=f"impl-{name}", daemon=True)
    thread.start()
    return thread
