"""The wheel records what it was built from: the version and the commit (conformance/build.json).

An installed kit has no checkout to ask, so `conformance --version`, the results header and the
pages could not name its commit. The build writes both into the wheel; pyproject.toml says
everything else. The commit is read as the checkout's provenance reads it (`-dirty` when
tracked files differ), so a release built from a clean tag names exactly that tag's commit. A
build from a copy without a repository records CONFORMANCE_BUILD_COMMIT instead.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CHECKOUT = Path(__file__).resolve().parent
sys.path.insert(0, str(CHECKOUT))
from conformance.stream.provenance import (  # noqa: E402
    BUILD_COMMIT,
    BUILD_INFO_NAME,
    BUILD_RELEASE,
    kit_commit,
    release_state,
)


class RecordingBuildPy(build_py):
    """build_py, then the build's record beside the package's modules."""

    def run(self) -> None:
        super().run()
        commit = kit_commit(CHECKOUT) or os.environ.get(BUILD_COMMIT) or None
        record = {
            "version": self.distribution.get_version(),
            "commit": commit,
            "release": os.environ.get(BUILD_RELEASE) or release_state(CHECKOUT),
        }
        target = Path(self.build_lib) / "conformance" / BUILD_INFO_NAME
        target.parent.mkdir(parents=True, exist_ok=True)  # an editable build copies no module
        target.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


setup(cmdclass={"build_py": RecordingBuildPy})
