"""The operator telemetry surface: one private Prometheus registry per coordinator.

No identifier is ever a label value: labels carry reasons, kinds and causes only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
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


def render_summed(surfaces: Sequence[OfficeTelemetry]) -> str:
    """The exposition a scrape of several coordinator processes adds up to: each series summed
    over the processes (a deployment's operator reads one surface, not one per process)."""
    return generate_latest(_Summed([_WithoutCreated(s.registry) for s in surfaces])).decode()


class _Summed:
    """Metric families of several registries, each series' value summed across them."""

    def __init__(self, registries: Sequence[_WithoutCreated]) -> None:
        self._registries = registries

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Metric] = {}
        totals: dict[tuple[str, str, tuple[tuple[str, str], ...]], float] = {}
        for registry in self._registries:
            for metric in registry.collect():
                families.setdefault(metric.name, metric)
                for sample in metric.samples:
                    key = (metric.name, sample.name, tuple(sorted(sample.labels.items())))
                    totals[key] = totals.get(key, 0.0) + sample.value
        for name, family in families.items():
            summed = Metric(family.name, family.documentation, family.type)
            for (owner, sample_name, labels), value in totals.items():
                if owner == name:
                    summed.add_sample(sample_name, dict(labels), value)
            yield summed


class _WithoutCreated:
    """A view of a registry that drops `_created` samples: they read the wall clock."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[Metric]:
        for metric in self._registry.collect():
            metric.samples = [s for s in metric.samples if not s.name.endswith("_created")]
            yield metric
