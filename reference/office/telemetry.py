"""The operator telemetry surface: one private Prometheus registry per coordinator.

No identifier is ever a label value: labels carry reasons, kinds and causes only.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum

from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.metrics_core import Metric


class RateLimitReason(StrEnum):
    """The closed label set of the assignment rate-limit counter."""

    ALLOWANCE_EXHAUSTED = "allowance_exhausted"
    COUNT_READ_FAILED = "count_read_failed"
    TASK_UNATTRIBUTED = "task_unattributed"


class DedupKind(StrEnum):
    WINDOWED = "windowed"
    DURABLE = "durable"


OFFICE_QUEUE = "office"
GENERATION_UNRESOLVED = "generation_unresolved"


class OfficeTelemetry:
    """The dedup counters and the assignment rate-limit counter, on one surface."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._dedup = Counter(
            "office_run_dedup",
            "Wakes suppressed as duplicates of an existing run.",
            ["reason", "kind", "queue"],
            registry=self.registry,
        )
        self._keyless = Counter(
            "office_run_dedup_keyless",
            "Wakes enqueued without a dedup key.",
            ["reason", "cause"],
            registry=self.registry,
        )
        self._rate_limit = Counter(
            "office_assignment_rate_limit",
            "Assignment wakes refused or admitted degraded by the allowance gate.",
            ["reason"],
            registry=self.registry,
        )
        for reason in RateLimitReason:
            self._rate_limit.labels(reason=reason.value)

    def deduplicated(self, wake_reason: str, kind: DedupKind) -> None:
        self._dedup.labels(reason=wake_reason, kind=kind.value, queue=OFFICE_QUEUE).inc()

    def keyless(self, wake_reason: str, cause: str) -> None:
        self._keyless.labels(reason=wake_reason, cause=cause).inc()

    def rate_limited(self, reason: RateLimitReason) -> None:
        self._rate_limit.labels(reason=reason.value).inc()

    def render(self) -> str:
        """The Prometheus text exposition, without the wall-clock `_created` series."""
        return generate_latest(_WithoutCreated(self.registry)).decode()


class _WithoutCreated:
    """A view of a registry that drops `_created` samples: they read the wall clock."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[Metric]:
        for metric in self._registry.collect():
            metric.samples = [s for s in metric.samples if not s.name.endswith("_created")]
            yield metric
