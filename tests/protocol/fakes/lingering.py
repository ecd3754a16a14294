"""Declares reset and outlives its stdin: only a kill of its process group ends it and its child.

It writes its child's pid to child.pid in its store directory, so a test can
check that the child died too.
"""

import os
import subprocess
import time
from pathlib import Path

from fake_protocol import DESCRIPTION, RESULTS, serve

DESCRIPTION["capabilities"] = ["office", "restart", "reset"]
RESULTS["reset"] = None
child = subprocess.Popen(["sleep", "300"])
(Path(os.environ["CONFORMANCE_STORE"]) / "child.pid").write_text(str(child.pid))
serve(lambda seq, args: None, trigger="never sent")
time.sleep(300)
