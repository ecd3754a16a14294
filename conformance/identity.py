"""What this kit is and what it checks, said once: `--version`, the results header and a
release's CHANGELOG entry all state it.

A user pinning the kit needs to know when an upgrade can change a verdict. The version says
which release; the commit, which code (the checkout's, or the one a wheel was built from); the
protocol version, what an implementation must speak; and one hash per source spec, over the
registry's hash of each criterion's text, says which statement of the specs the verdicts
judge by. Two releases with the same protocol and spec hashes check the same clauses (their
scenarios and oracles may still catch more: the CHANGELOG says so).
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance import __version__
from conformance.protocol.messages import PROTOCOL_VERSION
from conformance.spec.registry import Registry, default_registry
from conformance.spec.spec_text import text_hash
from conformance.stream.provenance import kit_commit, release_state


@dataclass(frozen=True)
class KitIdentity:
    version: str
    commit: str | None
    protocol: int
    spec_hashes: dict[str, str]
    release: str = ""
    """Whether the build is a tagged release, and what is unreleased (`release_state`)."""

    def lines(self) -> list[str]:
        """`conformance --version`, one fact per line (a CHANGELOG entry repeats the
        `protocol` and `spec` lines)."""
        built = f" (commit {self.commit})" if self.commit else " (commit unknown)"
        specs = [f"spec {source}: {digest}" for source, digest in self.spec_hashes.items()]
        head = [f"conformance {self.version}{built}"]
        if self.release:
            head.append(f"build: {self.release}")
        return [*head, f"protocol v{self.protocol}", *specs]


def spec_hashes(registry: Registry) -> dict[str, str]:
    """One hash per source spec, over the registry's per-criterion text hashes."""
    by_source: dict[str, list[str]] = {}
    for criterion in registry.criteria:
        by_source.setdefault(criterion.source, []).append(criterion.source_hash)
    return {source: text_hash(" ".join(hashes)) for source, hashes in sorted(by_source.items())}


def kit_identity(registry: Registry | None = None) -> KitIdentity:
    return KitIdentity(
        version=__version__,
        commit=kit_commit(),
        protocol=PROTOCOL_VERSION,
        spec_hashes=spec_hashes(registry or default_registry()),
        release=release_state(),
    )
