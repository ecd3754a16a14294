"""The session's long-lived heap, kept out of the cyclic garbage collector's way.

What is alive once the suite is collected (the harness, the implementation's modules, the
parsed features, every collected item) stays alive until the session ends, yet each full
collection walks all of it again: in a suite run, four collections cost about a tenth of its
CPU time (docs/bench.md). Frozen, the collector skips it.

The heap thaws at the very end, after pytest's own last collections (it looks for objects that
raised while being freed), for a process that goes on after the session: the CLI writes its
reports, and a test may run the suite inside its own session. A cleanup registered first runs
last. Freezing does not nest: a session run inside another thaws the outer one's heap too, which
costs the outer session speed, never a result.
"""

from __future__ import annotations

import gc

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.add_cleanup(gc.unfreeze)


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.freeze()
