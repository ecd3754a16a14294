"""Lease throughput on PostgreSQL: claim, heartbeat and publish cycles across coordinator processes.

Each worker process holds its own reference Coordinator on the same database
and a wall clock (leases never expire during a run). Workers take request
indices from a shared dispenser that hands every request out twice, as an
at-least-once queue would, so two coordinators often race for the same
request and the database's fence must pick exactly one. The floor runs the
same loop with three bare conditional UPDATEs through psycopg (no budget
settlement, no ORM, one statement per transaction).

After each run the claims are checked: every (request, generation) won at
most once, every request won exactly once, and the store agrees (completed,
at generation 1).
"""

from __future__ import annotations

import multiprocessing
import queue
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.sharedctypes import Synchronized
from multiprocessing.synchronize import Barrier
from threading import BrokenBarrierError
from time import perf_counter, process_time
from typing import Any

from bench.report import Measure, Row
from bench.stats import MILLIS, percentile, rate
from bench.stores import Store, postgres_store
from conformance.reference.app import Coordinator
from conformance.reference.clock import SystemClock
from conformance.reference.errors import DomainError
from conformance.reference.workreq.permissions import PermissionSet
from conformance.reference.workreq.settings import SETTINGS

SECTION = "3. Lease throughput (PostgreSQL)"
ENVIRONMENT = "env-bench"
CAMPAIGN = "campaign-bench"
HOLDERS = 32
DELIVERIES = 2
"""How many times the dispenser hands out each request."""
RESULT_TIMEOUT = 600.0
RATE_TARGETS = {8: 4.0}
"""The highest cost × accepted against the floor, by number of processes."""

FLOOR_CLAIM = (
    "UPDATE workreq_requests SET lease_generation = lease_generation + 1, lease_holder = %s, "
    "lease_expires_at = %s, state = 'in_progress' WHERE request_id = %s "
    "AND state <> 'completed' AND (lease_expires_at IS NULL OR lease_expires_at <= %s) "
    "RETURNING lease_generation"
)
FLOOR_FENCE = (
    "request_id = %s AND lease_holder = %s AND lease_generation = %s "
    "AND state = 'in_progress' AND lease_expires_at > %s"
)
FLOOR_HEARTBEAT = f"UPDATE workreq_requests SET lease_expires_at = %s WHERE {FLOOR_FENCE}"
FLOOR_PUBLISH = (
    "UPDATE workreq_requests SET state = 'completed', result_ref = %s, lease_closed_at = %s, "
    f"completed_at = %s WHERE {FLOOR_FENCE}"
)


@dataclass(frozen=True)
class LeaseSettings:
    processes: tuple[int, ...]
    requests_per_process: int
    minimum_requests: int


@dataclass
class WorkerResult:
    """What one worker saw; latencies in seconds, for every claim call, won or lost."""

    claims_won: list[tuple[str, int]] = field(default_factory=list)
    claims_lost: Counter[str] = field(default_factory=Counter)
    claim_latencies: list[float] = field(default_factory=list)
    cycles: int = 0
    failures: list[str] = field(default_factory=list)
    cpu_seconds: float = 0.0
    """This worker's own CPU time in its loop (the client side; the server's is not here)."""


@dataclass(frozen=True)
class RunResult:
    seconds: float
    workers: list[WorkerResult]

    @property
    def cycles(self) -> int:
        return sum(worker.cycles for worker in self.workers)

    @property
    def cpu_per_cycle(self) -> float:
        return sum(worker.cpu_seconds for worker in self.workers) / max(1, self.cycles)

    @property
    def latencies(self) -> list[float]:
        return [latency for worker in self.workers for latency in worker.claim_latencies]

    @property
    def wins(self) -> Counter[tuple[str, int]]:
        return Counter(claim for worker in self.workers for claim in worker.claims_won)

    @property
    def lost(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for worker in self.workers:
            total.update(worker.claims_lost)
        return total


def measure(settings: LeaseSettings, postgres_url: str | None, unavailable: str) -> list[Row]:
    if postgres_url is None:
        return [_not_measured(unavailable)]
    rows: list[Row] = []
    with postgres_store(postgres_url, "lease") as store:
        _prepare_environment(store)
        for processes in settings.processes:
            count = max(settings.minimum_requests, processes * settings.requests_per_process)
            reference_ids = _delegate(store, f"ref{processes}", count)
            floor_ids = _delegate(store, f"floor{processes}", count)
            warm_ups = _delegate(store, f"warm{processes}", 2 * processes)
            floor = _run(store, processes, floor_ids, _floor_worker, warm_ups[:processes])
            reference = _run(
                store, processes, reference_ids, _reference_worker, warm_ups[processes:]
            )
            rows += _rows(store, processes, reference, floor, reference_ids)
    return rows


# -- setup -------------------------------------------------------------------------


def holder_name(index: int) -> str:
    return f"holder-{index}"


def _prepare_environment(store: Store) -> None:
    coordinator = Coordinator(store.url, SystemClock())
    try:
        service = coordinator.work_requests
        service.create_environment(ENVIRONMENT, [holder_name(i) for i in range(HOLDERS)])
        service.create_campaign(CAMPAIGN, ENVIRONMENT, 10**9)
    finally:
        coordinator.close()


def _delegate(store: Store, prefix: str, count: int) -> list[str]:
    """`count` open requests, made through the reference from as many root sessions as needed."""
    coordinator = Coordinator(store.url, SystemClock())
    service = coordinator.work_requests
    per_session = service.limits().max_children_per_session
    ids: list[str] = []
    try:
        for index in range(count):
            session = f"{prefix}-root-{index // per_session}"
            if index % per_session == 0:
                service.create_session(session, CAMPAIGN, holder_name(0), PermissionSet())
            request = service.delegate(
                "spawn",
                session,
                deliverable=f"deliverable {index}",
                acceptance_checks=["done"],
                budget_slice=10,
                permissions=PermissionSet(),
                assignee=None,
            )
            ids.append(request.request_id)
    finally:
        coordinator.close()
    return ids


# -- the run -----------------------------------------------------------------------

Worker = Callable[[Store, int, list[str], Any, Barrier, Any, str], None]


def _run(
    store: Store, processes: int, ids: list[str], worker: Worker, warm_ups: list[str]
) -> RunResult:
    """Start the workers, release them together, and time until the last one reports.

    Each worker first makes one untimed cycle on a request of its own (`warm_ups`),
    so that neither side's time holds connecting or compiling: the figures are
    those of a coordinator that has been running for a while.
    """
    context = multiprocessing.get_context("fork")
    dispenser = context.Value("q", 0)
    barrier = context.Barrier(processes + 1)
    results = context.Queue()
    started = [
        context.Process(
            target=worker,
            args=(store, index, ids, dispenser, barrier, results, warm_ups[index]),
        )
        for index in range(processes)
    ]
    for process in started:
        process.start()
    try:
        barrier.wait(timeout=RESULT_TIMEOUT)
        start = perf_counter()
        collected = [results.get(timeout=RESULT_TIMEOUT) for _ in started]
        seconds = perf_counter() - start
    except (queue.Empty, BrokenBarrierError) as error:
        raise RuntimeError(f"lease workers did not finish: {error!r}") from error
    finally:
        for process in started:
            process.join(timeout=RESULT_TIMEOUT)
    return RunResult(seconds, collected)


def _next_request(dispenser: Synchronized[int], ids: list[str]) -> str | None:
    with dispenser.get_lock():
        taken = dispenser.value
        dispenser.value += 1
    return ids[taken // DELIVERIES] if taken < len(ids) * DELIVERIES else None


Cycle = Callable[[str, WorkerResult], None]
"""One claim, heartbeat and publish of a request, recorded into the worker's result."""


def _work(
    ids: list[str],
    dispenser: Synchronized[int],
    barrier: Barrier,
    results: Any,
    cycle: Cycle,
    warm_up: str,
) -> None:
    """One untimed cycle on the worker's own request; then wait for the others, and cycle
    through dispensed requests until none is left."""
    warmed = WorkerResult()
    cycle(warm_up, warmed)
    if warmed.cycles != 1:
        raise RuntimeError(f"the warm-up cycle on {warm_up} failed: {warmed}")
    outcome = WorkerResult()
    barrier.wait()
    cpu_start = process_time()
    while (request_id := _next_request(dispenser, ids)) is not None:
        cycle(request_id, outcome)
    outcome.cpu_seconds = process_time() - cpu_start
    results.put(outcome)


def _reference_worker(
    store: Store,
    index: int,
    ids: list[str],
    dispenser: Synchronized[int],
    barrier: Barrier,
    results: Any,
    warm_up: str,
) -> None:
    holder = holder_name(index)
    coordinator = Coordinator(store.url, SystemClock())
    service = coordinator.work_requests

    def cycle(request_id: str, outcome: WorkerResult) -> None:
        start = perf_counter()
        try:
            lease = service.claim(request_id, holder)
        except DomainError as refusal:
            outcome.claim_latencies.append(perf_counter() - start)
            outcome.claims_lost[refusal.code] += 1
            return
        outcome.claim_latencies.append(perf_counter() - start)
        outcome.claims_won.append((request_id, lease.generation))
        try:
            service.heartbeat(request_id, holder, lease.generation)
            service.publish(request_id, holder, lease.generation, f"result-{request_id}")
        except DomainError as error:
            outcome.failures.append(f"{request_id}: {error.code}")
            return
        outcome.cycles += 1

    try:
        _work(ids, dispenser, barrier, results, cycle, warm_up)
    finally:
        coordinator.close()


def _floor_worker(
    store: Store,
    index: int,
    ids: list[str],
    dispenser: Synchronized[int],
    barrier: Barrier,
    results: Any,
    warm_up: str,
) -> None:
    holder = holder_name(index)
    connection = store.raw_connection(autocommit=True)

    def cycle(request_id: str, outcome: WorkerResult) -> None:
        now = _naive_now()
        start = perf_counter()
        claimed = connection.execute(
            FLOOR_CLAIM, (holder, now + SETTINGS.lease_duration, request_id, now)
        ).fetchone()
        outcome.claim_latencies.append(perf_counter() - start)
        if claimed is None:
            outcome.claims_lost["refused"] += 1
            return
        generation = int(claimed[0])
        outcome.claims_won.append((request_id, generation))
        fence = (request_id, holder, generation)
        now = _naive_now()
        renewed = connection.execute(
            FLOOR_HEARTBEAT, (now + SETTINGS.lease_duration, *fence, now)
        ).rowcount
        now = _naive_now()
        published = connection.execute(
            FLOOR_PUBLISH, (f"result-{request_id}", now, now, *fence, now)
        ).rowcount
        if renewed != 1 or published != 1:
            outcome.failures.append(f"{request_id}: fence refused the holder")
            return
        outcome.cycles += 1

    try:
        _work(ids, dispenser, barrier, results, cycle, warm_up)
    finally:
        connection.close()


def _naive_now() -> datetime:
    """The wall clock as the reference stores instants: naive UTC."""
    return datetime.now(UTC).replace(tzinfo=None)


# -- verification and rows ------------------------------------------------------------


def _double_claims(store: Store, result: RunResult, ids: list[str]) -> tuple[int, str]:
    """Claims that should not exist, and what was checked."""
    wins = result.wins
    repeated = sum(count - 1 for count in wins.values() if count > 1)
    per_request = Counter(request_id for request_id, _ in wins)
    extra = sum(count - 1 for count in per_request.values() if count > 1)
    unclaimed = len(set(ids) - set(per_request))
    with store.raw_connection() as connection:
        disagreeing = connection.execute(
            "SELECT count(*) FROM workreq_requests WHERE request_id = ANY(%s) "
            "AND (state <> 'completed' OR lease_generation <> 1)",
            (ids,),
        ).fetchone()[0]
    checked = (
        f"{sum(wins.values())} claims won of {len(ids) * DELIVERIES} attempts on {len(ids)} "
        f"requests; same generation twice: {repeated}; a request won twice: {extra}; "
        f"never won: {unclaimed}; store disagreeing: {disagreeing}; "
        f"failed heartbeat or publish: {sum(len(w.failures) for w in result.workers)}"
    )
    return repeated + extra, checked


def _rows(
    store: Store, processes: int, reference: RunResult, floor: RunResult, ids: list[str]
) -> list[Row]:
    label = f"{processes} process{'es' if processes > 1 else ''}"
    doubles, checked = _double_claims(store, reference, ids)
    lost = ", ".join(f"{count} {code}" for code, count in sorted(reference.lost.items()))
    return [
        Row(
            key=f"lease.p{processes}.rate",
            section=SECTION,
            what=f"{label}: claim+heartbeat+publish cycles/s, bare SQL floor vs reference",
            baseline=Measure("bare SQL", rate(floor.cycles, floor.seconds), "cycles/s"),
            subject=Measure("reference", rate(reference.cycles, reference.seconds), "cycles/s"),
            target=RATE_TARGETS.get(processes),
            note=(
                f"client CPU per cycle: reference {reference.cpu_per_cycle * MILLIS:.1f} ms, "
                f"floor {floor.cpu_per_cycle * MILLIS:.1f} ms; "
                f"reference claims lost: {lost or 'none'}"
            ),
        ),
        Row(
            key=f"lease.p{processes}.latency",
            section=SECTION,
            what=f"{label}: reference claim latency, p50 vs p99",
            baseline=Measure("p50", percentile(reference.latencies, 0.5) * MILLIS, "ms"),
            subject=Measure("p99", percentile(reference.latencies, 0.99) * MILLIS, "ms"),
            note=(
                f"floor p50 {percentile(floor.latencies, 0.5) * MILLIS:.2f} ms, "
                f"p99 {percentile(floor.latencies, 0.99) * MILLIS:.2f} ms"
            ),
        ),
        Row(
            key=f"lease.p{processes}.double_claims",
            section=SECTION,
            what=f"{label}: double claims (reference)",
            baseline=Measure("claims won", float(sum(reference.wins.values())), "claims"),
            subject=Measure("double claims", float(doubles), "claims"),
            target=0.0,
            note=checked,
        ),
    ]


def _not_measured(reason: str) -> Row:
    return Row(
        key="lease.p1.rate",
        section=SECTION,
        what="cycles/s, bare SQL floor vs reference",
        baseline=Measure("bare SQL", None, "cycles/s"),
        note=f"not measured: {reason}",
    )
