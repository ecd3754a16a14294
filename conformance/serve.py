"""Serves the reference implementation over protocol v1, on stdin and stdout.

This is what `--impl exec:"python -m conformance.serve"` (or `conformance
serve-reference`) runs: the same in-process driver, behind the wire, so the
suite can check that the exec adapter and the protocol lose nothing.

The store: `--database URL` when given, else a SQLite file inside the
directory named by CONFORMANCE_STORE. That directory is empty at the start of
each scenario and survives a restart, so an empty directory means "start from
an empty store", and a marker file left in it means "a relaunch: keep the
store". `reset` drops and recreates the schema and replaces the in-process
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
from typing import TextIO

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

STORE_MARKER = ".initialized"
EXIT_OK, EXIT_NO_STORE = 0, 2

log = logging.getLogger("conformance.serve")


class StoreNotConfigured(Exception):
    """Neither --database nor CONFORMANCE_STORE says where the store lives."""


def serve(
    reader: TextIO,
    writer: TextIO,
    database_url: str | None,
    *,
    validate: bool = False,
    mutant: str | None = None,
) -> int:
    """Answer one request per line until stdin closes; the exit status."""
    _log_to_stderr()
    try:
        url = prepare_store(database_url, os.environ.get(STORE_ENV))
    except StoreNotConfigured as error:
        log.error("%s", error)
        return EXIT_NO_STORE
    reference = ServedReference(url, mutant)
    server = ProtocolServer(reference.driver, validate=validate, reset=reference.reset)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            for line in reader:
                writer.write(server.answer(line) + "\n")
                writer.flush()
    finally:
        reference.close()
    return EXIT_OK


class ServedReference:
    """The in-process reference (or one of its mutants) on one store URL, which `reset`
    replaces by a fresh one."""

    def __init__(self, url: str, mutant: str | None = None) -> None:
        self.url = url
        self.mutant = mutant
        self.driver = self._open()

    def _open(self) -> Driver:
        if self.mutant is not None:
            import mutants

            return mutants.driver_on(self.mutant, self.url)
        from conformance.adapters.inprocess import InProcessDriver

        return InProcessDriver(self.url)

    def reset(self) -> Driver:
        """Empty the store and start a new driver: no run, counter, log or armed hook remains."""
        from conformance.adapters.inprocess import empty_store

        self.driver.close()
        empty_store(self.url)
        self.driver = self._open()
        return self.driver

    def close(self) -> None:
        self.driver.close()


def prepare_store(database_url: str | None, store_directory: str | None) -> str:
    """The store's URL, emptied on the first launch of a scenario only."""
    if store_directory is None:
        if database_url is None:
            raise StoreNotConfigured(f"no store: pass --database URL or set {STORE_ENV}")
        return database_url
    directory = Path(store_directory)
    directory.mkdir(parents=True, exist_ok=True)
    url = database_url or f"sqlite:///{directory / 'reference.sqlite'}"
    marker = directory / STORE_MARKER
    if not marker.exists():
        from conformance.adapters.inprocess import empty_store

        empty_store(url)
        marker.touch()
    return url


class ProtocolServer:
    """Turns request lines into reply lines; never raises, whatever the line holds.

    With a `reset` callable (which empties the implementation and returns the
    driver to use from then on) it declares and serves the `reset` capability.
    """

    def __init__(
        self, driver: Driver, *, validate: bool, reset: Callable[[], Driver] | None = None
    ) -> None:
        self.driver = driver
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
        if request.operation is HANDSHAKE:
            description = self._description()
            return HandshakeResult(
                protocol_version=PROTOCOL_VERSION,
                implementation=Implementation(name=description.name, version=description.version),
                description=description,
            )
        if request.operation is RESET and self._reset is not None:
            self.driver = self._reset()
            return None
        return invoke(self.driver, request)

    def _description(self) -> Description:
        description = self.driver.describe()
        if self._reset is None:
            return description
        capabilities = [*description.capabilities, Capability.RESET]
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
    parser.add_argument("--mutant", default=None, help="serve this deliberately broken variant")
    options = parser.parse_args(argv)
    if options.mutant is not None:
        import mutants

        if options.mutant not in mutants.MUTANTS:
            parser.error(str(mutants.UnknownMutant(options.mutant)))
    for stream in (sys.stdin, sys.stdout):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(encoding="utf-8")
    return serve(
        sys.stdin, sys.stdout, options.database, validate=options.validate, mutant=options.mutant
    )


if __name__ == "__main__":
    sys.exit(main())
