"""The served reference with a sham reset: it acknowledges reset, but forgets nothing."""

import sys

from conformance.driver import Driver
from conformance.wire import serve


def sham_reset(self: serve.ServedReference) -> Driver:
    assert self.driver is not None, "reset comes after the handshake"
    return self.driver


serve.ServedReference.reset = sham_reset  # type: ignore[method-assign]
sys.exit(serve.main())
