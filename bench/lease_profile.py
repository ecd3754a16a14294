"""Where a lease cycle's time goes in the reference, on PostgreSQL: `python bench/lease_profile.py`.

One coordinator claims, heartbeats and publishes requests of its own, after a
warm-up, as `lease_rate` does: first plainly, to time each operation's client
CPU, then under cProfile (on the CPU clock), to count what each sends
(statements, transactions, round trips) and split its CPU by layer (the
reference's own code, the ORM, SQLAlchemy's core, psycopg, the rest; the
profiler inflates every layer, so read the shares, not the seconds).
Round trips are statements plus the BEGIN, COMMIT and ROLLBACK actually sent:
psycopg 3 sends BEGIN on its own before a transaction's first statement, and
nothing of the kind on an autocommitting connection (claim and heartbeat run
on one). A refused claim (another holder's lease is live) is profiled too: in
the throughput bench every request is handed out twice, so a lost claim comes
with every cycle. The floor makes one round trip per operation (an
autocommitted conditional UPDATE).
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import Connection, event

from bench.lease_rate import _delegate, _prepare_environment, holder_name
from bench.stores import postgres_base_url, postgres_store, postgres_unavailable
from conformance.reference.app import Coordinator
from conformance.reference.clock import SystemClock
from conformance.reference.errors import LeaseHeld
from conformance.reference.workreq.service import WorkRequestService

CYCLES = 300
WARM_UP = 50
OPERATIONS = ("claim", "refused claim", "heartbeat", "publish")
T = TypeVar("T")
LAYERS = (
    ("reference", "/reference/"),
    ("sqlalchemy ORM", "/sqlalchemy/orm/"),
    ("sqlalchemy core", "/sqlalchemy/"),
    ("psycopg", "/psycopg/"),
)


class Tally:
    """Statements and transactions seen by the engine while `operation` is set."""

    def __init__(self) -> None:
        self.operation = ""
        self.counts: Counter[tuple[str, str]] = Counter()

    def listen(self, coordinator: Coordinator) -> None:
        for engine in (coordinator.db.engine, coordinator.db.autocommitting_engine):
            event.listen(engine, "before_cursor_execute", self._statement)
            for name in ("begin", "commit", "rollback"):
                event.listen(engine, name, self._seen(name))

    def _statement(self, *_: object, **__: object) -> None:
        self.counts[(self.operation, "statement")] += 1

    def _seen(self, name: str) -> Callable[[Connection], None]:
        """SQLAlchemy reports a begin and a commit on an autocommitting connection too; only
        those psycopg sends count as round trips."""

        def record(connection: Connection) -> None:
            if not connection.connection.dbapi_connection.autocommit:  # type: ignore[union-attr]
                self.counts[(self.operation, name)] += 1

        return record


class Operations:
    """Runs each operation of a cycle under its own profile, counting its CPU and statements."""

    def __init__(self, tally: Tally, *, profiled: bool) -> None:
        self.tally = tally
        self.profiled = profiled
        self.profiles = {name: cProfile.Profile(time.process_time) for name in OPERATIONS}
        self.cpu: Counter[str] = Counter()

    def run(self, operation: str, call: Callable[[], T]) -> T:
        self.tally.operation = operation
        profile = self.profiles[operation]
        start = time.process_time()
        if self.profiled:
            profile.enable()
        try:
            return call()
        finally:
            profile.disable()
            self.cpu[operation] += time.process_time() - start
            self.tally.operation = ""


def main() -> int:
    base = postgres_base_url()
    unavailable = postgres_unavailable(base)
    if unavailable:
        print(f"not measured: {unavailable}")
        return 1
    with postgres_store(base, "lease_profile") as store:
        _prepare_environment(store)
        ids = _delegate(store, "profile", WARM_UP + 2 * CYCLES)
        coordinator = Coordinator(store.url, SystemClock())
        try:
            service = coordinator.work_requests
            tally = Tally()
            for request_id in ids[:WARM_UP]:
                _cycle(service, request_id, Operations(tally, profiled=False))
            plain = Operations(tally, profiled=False)
            for request_id in ids[WARM_UP : WARM_UP + CYCLES]:
                _cycle(service, request_id, plain)
            tally.listen(coordinator)
            profiled = Operations(tally, profiled=True)
            for request_id in ids[WARM_UP + CYCLES :]:
                _cycle(service, request_id, profiled)
        finally:
            coordinator.close()
    _print(plain, profiled)
    return 0


def _cycle(service: WorkRequestService, request_id: str, operations: Operations) -> None:
    holder = holder_name(1)
    lease = operations.run("claim", lambda: service.claim(request_id, holder))
    generation = lease.generation
    operations.run("refused claim", lambda: _refused_claim(service, request_id))
    operations.run("heartbeat", lambda: service.heartbeat(request_id, holder, generation))
    result = f"result-{request_id}"
    operations.run("publish", lambda: service.publish(request_id, holder, generation, result))


def _refused_claim(service: WorkRequestService, request_id: str) -> None:
    try:
        service.claim(request_id, holder_name(2))
    except LeaseHeld:
        return
    raise RuntimeError(f"a second holder claimed {request_id} over a live lease")


def _print(plain: Operations, profiled: Operations) -> None:
    """One line per operation: what it sends, its CPU per call, and the profiled pass's split of
    its CPU by layer."""
    print(f"{CYCLES} cycles after {WARM_UP} untimed, then {CYCLES} more under cProfile")
    for operation in OPERATIONS:
        counts = profiled.tally.counts
        statements = counts[(operation, "statement")] / CYCLES
        transactions = counts[(operation, "begin")] / CYCLES
        ends = (counts[(operation, "commit")] + counts[(operation, "rollback")]) / CYCLES
        round_trips = statements + transactions + ends
        layers = _layers(pstats.Stats(profiled.profiles[operation]))
        total = sum(layers.values()) or 1.0
        split = ", ".join(
            f"{name} {share / total:.0%}" for name, share in sorted(layers.items(), key=_second)
        )
        print(
            f"{operation}: {statements:.1f} statements, {transactions:.1f} BEGIN sent, "
            f"{round_trips:.1f} round trips; CPU {plain.cpu[operation] / CYCLES * 1e3:.2f} "
            f"ms per call ({split})"
        )


def _second(item: tuple[str, float]) -> float:
    return -item[1]


def _layers(stats: pstats.Stats) -> dict[str, float]:
    """Own time per layer, in seconds: each function's tottime goes to the first layer whose
    path it lies under."""
    spent: Counter[str] = Counter()
    for (path, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        layer = next((name for name, part in LAYERS if part in path), "other")
        spent[layer] += tottime
    return dict(spent)


if __name__ == "__main__":
    raise SystemExit(main())
