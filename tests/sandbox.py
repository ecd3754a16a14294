"""Whether the sandbox tests run here: where bubblewrap is installed, and always under .ci/run,
which installs it and sets CONFORMANCE_REQUIRE_SANDBOX=1 so that a missing one fails."""

from __future__ import annotations

import os
import shutil

import pytest

REQUIRED = os.environ.get("CONFORMANCE_REQUIRE_SANDBOX") == "1"
SANDBOXED = REQUIRED or shutil.which("bwrap") is not None
needs_bwrap = pytest.mark.skipif(
    not SANDBOXED, reason="bubblewrap (bwrap) is not installed; .ci/run installs it"
)
