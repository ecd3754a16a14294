"""Serves the reference implementation over protocol v1, on stdin and stdout.

This is what `--impl exec:"python -m conformance.wire.serve"` (or `conformance
serve-reference`) runs: the same in-process driver, behind the wire, so the
suite can check that the exec adapter and the protocol lose nothing.

The store: `--database URL` when given, else a SQLite file inside the
directory named by CONFORMANCE_STORE. That directory is empty at the start of
each scenario and survives a restart, so an empty directory means "start from
an empty store", and a marker file left in it means "a relaunch: keep the
store". The store is opened at the handshake, never before (capability
`prelaunch`). `reset` drops and recreates the schema and replaces the in-process
driver, so a reused process starts the next scenario as empty as a fresh one.
Stdout carries protocol lines only; logs and stray prints go to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from conformance.driver import Capability, Description, Driver, DriverError, ErrorCode
from conformance.protocol.codec import (
    ProtocolError,
    ProtocolErrorKind,
    decode_request,
    encode_error,
    encode_not_supported,
    encode_ok,
)
from conformance.protocol.messages import (
    HANDSHAKE,
    PROTOCOL_VERSION,
    RESET,
    STORE_ENV,
    AdvanceClockArgs,
    HandshakeResult,
    Implementation,
    Request,
)

if TYPE_CHECKING:
    from sqlalchemy import Engine

STORE_MARKER = ".initialized"
EXIT_OK, EXIT_NO_STORE = 0, 2

log = logging.getLogger("conformance.wire.serve")


def serve(
    reader: TextIO,
    writer: TextIO,
    database_url: str | None,
    *,
    validate: bool = False,
    altered: str | None = None,
) -> int:
    """Answer one request per line until stdin closes; the exit status.

    `altered` serves a mutant or a variant instead of the reference: `mutant:<name>` or
    `variant:<name>`.
    """
    _log_to_stderr()
    store_directory = os.environ.get(STORE_ENV)
    if store_directory is None and database_url is None:
        log.error("no store: pass --database URL or set %s", STORE_ENV)
        return EXIT_NO_STORE
    reference = ServedReference(database_url, store_directory, altered)
    server = ProtocolServer(reference.open, validate=validate, reset=reference.reset)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            for line in reader:
                writer.write(server.answer(line) + "\n")
                writer.flush()
    finally:
        reference.close()
    return EXIT_OK


class ServedReference:
    """The in-process reference (or a mutant or variant of it), which `reset` replaces anew.

    Its store is opened at the handshake, not at launch (capability `prelaunch`):
    the modules are imported at once, so a process launched ahead of a restart
    has paid for its start-up before the harness needs it.
    """

    def __init__(
        self, database_url: str | None, store_directory: str | None, altered: str | None = None
    ) -> None:
        self._database_url = database_url
        self._store_directory = store_directory
        self.altered = altered
        self.driver: Driver | None = None
        self._keeper: Engine | None = None
        self._url = ""
        self._new_driver = self._driver_factory()

    def _driver_factory(self) -> Callable[[str], Driver]:
        kind, _, name = (self.altered or "").partition(":")
        if kind:
            from conformance.implementations import family

            known = family(kind)
            return lambda url: known.driver_on(name, url)
        from conformance.adapters.inprocess import InProcessDriver

        return InProcessDriver

    def open(self) -> Driver:
        """Prepare the store and start the driver; called once, at the handshake."""
        self._url = prepare_store(self._database_url, self._store_directory)
        self.driver = self._new_driver(self._url)
        if self._keeper is None:
            from conformance.adapters.inprocess_stores import hold_sqlite_open

            self._keeper = hold_sqlite_open(self._url)
        return self.driver

    def reset(self) -> Driver:
        """Empty the store and start a new driver: no run, counter, log or armed hook remains."""
        from conformance.adapters.inprocess_stores import empty_store

        self._close_driver()
        empty_store(self._url)
        self.driver = self._new_driver(self._url)
        return self.driver

    def close(self) -> None:
        self._close_driver()
        if self._keeper is not None:
            self._keeper.dispose()
            self._keeper = None

    def _close_driver(self) -> None:
        if self.driver is not None:
            self.driver.close()


def prepare_store(database_url: str | None, store_directory: str | None) -> str:
    """The store's URL, emptied on the first launch of a scenario only."""
    if store_directory is None:
        if database_url is None:
            raise ValueError(f"no store: pass --database URL or set {STORE_ENV}")
        return database_url
    directory = Path(store_directory)
    directory.mkdir(parents=True, exist_ok=True)
    url = database_url or f"sqlite:///{directory / 'reference.sqlite'}"
    marker = directory / STORE_MARKER
    if not marker.exists():
        from conformance.adapters.inprocess_stores import empty_store

        empty_store(url)
        marker.touch()
    return url


class ProtocolServer:
    """Turns request lines into reply lines; never raises, whatever the line holds.

    The driver is opened by `open_driver` at the first handshake, so the
    server declares `prelaunch`. With a `reset` callable (which empties the
    implementation and returns the driver to use from then on) it declares
    and serves the `reset` capability.
    """

    def __init__(
        self,
        open_driver: Callable[[], Driver],
        *,
        validate: bool,
        reset: Callable[[], Driver] | None = None,
    ) -> None:
        self._open_driver = open_driver
        self._driver: Driver | None = None
        self.validate = validate
        self.greeted = False
        self._reset = reset

    def answer(self, line: str) -> str:
        try:
            request = decode_request(line, validate=self.validate)
        except ProtocolError as error:
            log.warning("bad request: %s", error)
            if error.kind is ProtocolErrorKind.UNKNOWN_OP:
                return encode_not_supported(error.seq or 0, error.message)
            return encode_error(error.seq or 0, ErrorCode.INVALID_INPUT, str(error), definite=True)
        if not self.greeted and request.operation is not HANDSHAKE:
            message = f"the first request must be {HANDSHAKE.name}, got {request.operation.name}"
            return encode_error(request.seq, ErrorCode.INVALID_INPUT, message, definite=True)
        self.greeted = True
        return self._perform(request)

    def _perform(self, request: Request) -> str:
        if request.operation is RESET and self._reset is None:
            return encode_not_supported(request.seq, "reset is not offered")
        try:
            result = self._result(request)
            return encode_ok(request.seq, request.operation, result, validate=self.validate)
        except DriverError as error:
            return encode_error(request.seq, error.code, error.message, definite=error.definite)
        except Exception as error:  # a bug in the implementation: report it, keep serving
            log.exception("%s failed", request.operation.name)
            message = f"{type(error).__name__}: {error}"
            return encode_error(request.seq, ErrorCode.INTERNAL, message, definite=False)

    def _result(self, request: Request) -> object:
        driver = self._driver
        if driver is None:
            driver = self._driver = self._open_driver()
        if request.operation is HANDSHAKE:
            description = self._description(driver)
            return HandshakeResult(
                protocol_version=PROTOCOL_VERSION,
                implementation=Implementation(name=description.name, version=description.version),
                description=description,
            )
        if request.operation is RESET and self._reset is not None:
            self._driver = self._reset()
            return None
        return invoke(driver, request)

    def _description(self, driver: Driver) -> Description:
        description = driver.describe()
        served = [
            Capability.PRELAUNCH,
            Capability.MULTIPROCESS,
            *([Capability.RESET] if self._reset else []),
        ]
        capabilities = [*description.capabilities, *served]
        return description.model_copy(update={"capabilities": capabilities})


def invoke(driver: Driver, request: Request) -> object:
    """Call the port method the request names, with the request's arguments."""
    args = request.args
    if isinstance(args, AdvanceClockArgs):
        return driver.advance_clock(timedelta(microseconds=args.delta_microseconds))
    method = getattr(driver, request.operation.name)
    return method(**{name: getattr(args, name) for name in type(args).model_fields})


def _log_to_stderr() -> None:
    if not logging.getLogger().handlers:
        logging.basicConfig(
            stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default=None, help="SQLAlchemy URL of the store")
    parser.add_argument(
        "--validate", action="store_true", help="check every message against the JSON Schema"
    )
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--mutant", default=None, help="serve this deliberately broken reference")
    chosen.add_argument("--variant", default=None, help="serve this legal variant of the reference")
    options = parser.parse_args(argv)
    altered = _altered(parser, options.mutant, options.variant)
    for stream in (sys.stdin, sys.stdout):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(encoding="utf-8")
    return serve(
        sys.stdin, sys.stdout, options.database, validate=options.validate, altered=altered
    )


def _altered(
    parser: argparse.ArgumentParser, mutant: str | None, variant: str | None
) -> str | None:
    """`mutant:<name>` or `variant:<name>` when one was asked for and exists; a usage error when
    it does not."""
    from conformance.implementations import FamilyMissing, family

    for kind, name in (("mutant", mutant), ("variant", variant)):
        if name is None:
            continue
        try:
            known = family(kind)
        except FamilyMissing as error:
            parser.error(str(error))
        if name not in known.members:
            parser.error(known.unknown(name))
        return f"{kind}:{name}"
    return None


if __name__ == "__main__":
    sys.exit(main())
