"""Declares prelaunch, yet creates its store directory as soon as it starts."""

import os
from pathlib import Path

import fake_protocol
from fake_protocol import serve

Path(os.environ["CONFORMANCE_STORE"]).mkdir(parents=True, exist_ok=True)
fake_protocol.DESCRIPTION["capabilities"] = ["office", "restart", "prelaunch"]
serve(lambda seq, args: None, trigger="never sent")
