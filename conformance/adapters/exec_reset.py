"""What the harness checks after a `reset`, before it trusts a reused process.

An implementation that acknowledges `reset` but keeps what the previous
scenario left would make the next scenario's verdict depend on the order of
the run. A full proof is out of reach, but a few reads are cheap: no run, no
warning log, the specification's counters at zero, and neither the last task
nor the last environment the previous scenario created (the witnesses)
resolving any more. An environment is the root of every work-request record,
so one that survived is the sign of a work-request store left behind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from conformance.driver import Capability, Description, DriverError, ErrorCode, OfficeVocabulary
from conformance.protocol import messages as m

Call = Callable[[m.Operation[Any, Any], m.Args], Any]
"""Sends one request to the process and answers its result, raising DriverError on an error."""


def spec_counters(vocabulary: OfficeVocabulary) -> frozenset[str]:
    """The counters the specs are about, under the names the implementation declared."""
    return frozenset({vocabulary.rate_limit_counter, *vocabulary.dedup_counters})


@dataclass
class Witnesses:
    """The last task and environment created since the process's last reset or launch."""

    task_id: str | None = None
    membership: tuple[str, str] | None = None
    """An environment and one of its members."""


@dataclass(frozen=True)
class Probe:
    """One read, and how to tell from its answer that something survived the reset.

    `leftover` judges a successful answer; a probe without one expects `not_found`.
    """

    operation: m.Operation[Any, Any]
    args: m.Args
    leftover: Callable[[Any], str | None] | None = None
    what: str = ""


def reset_leftovers(call: Call, description: Description, witnesses: Witnesses) -> list[str]:
    """What is still visible after the reset, one finding per probe that saw something."""
    findings = (_finding(call, probe) for probe in _probes(description, witnesses))
    return [finding for finding in findings if finding is not None]


def _probes(description: Description, witnesses: Witnesses) -> list[Probe]:
    probes: list[Probe] = []
    capabilities = description.capabilities
    if Capability.OFFICE in capabilities:
        vocabulary = description.office.vocabulary if description.office else OfficeVocabulary()
        counters = spec_counters(vocabulary)
        probes += [
            Probe(m.LIST_RUNS, m.NoArgs(), lambda runs: _count(runs, "run")),
            Probe(m.TELEMETRY, m.NoArgs(), partial(_counters_not_at_zero, counters=counters)),
            Probe(m.WARNING_LOGS, m.NoArgs(), lambda logs: _count(logs, "warning log")),
        ]
        if witnesses.task_id is not None:
            task = witnesses.task_id
            probes.append(Probe(m.GET_TASK, m.GET_TASK.args(task_id=task), what=f"task {task!r}"))
    if Capability.WORK_REQUESTS in capabilities and witnesses.membership is not None:
        environment, member = witnesses.membership
        listing = m.LIST_REQUESTS.args(environment_id=environment, principal=member)
        probes.append(Probe(m.LIST_REQUESTS, listing, what=f"environment {environment!r}"))
    return probes


def _finding(call: Call, probe: Probe) -> str | None:
    name = probe.operation.name
    try:
        result = call(probe.operation, probe.args)
    except DriverError as error:
        if probe.leftover is None and error.code is ErrorCode.NOT_FOUND:
            return None
        return f"{name} failed: {error}"
    if probe.leftover is None:
        return f"{name} still finds {probe.what}"
    leftover = probe.leftover(result)
    return None if leftover is None else f"{name} still shows {leftover}"


def _count(items: list[Any], noun: str) -> str | None:
    return f"{len(items)} {noun}(s)" if items else None


def _counters_not_at_zero(text: str, *, counters: frozenset[str]) -> str | None:
    try:
        samples = [
            sample
            for family in text_string_to_metric_families(text)
            for sample in family.samples
            if sample.name in counters and sample.value != 0
        ]
    except ValueError as error:
        return f"unreadable metrics ({error})"
    shown = [f"{sample.name}{_labels(sample.labels)} {sample.value:g}" for sample in samples]
    return ", ".join(shown) or None


def _labels(labels: dict[str, str]) -> str:
    inside = ",".join(f'{name}="{value}"' for name, value in sorted(labels.items()))
    return f"{{{inside}}}" if inside else ""
