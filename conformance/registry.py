"""The criteria registry: every acceptance criterion the kit pins, loaded from data."""

from __future__ import annotations

import re

CRITERION_TAG = re.compile(r"AC-(?:OFFICE-ASSIGN-RATE|ARMONIA-WORKREQ)-\d{3}\.\d+")
