"""The property checks `conformance run` runs beside the Gherkin scenarios (see `catalogue`).

Each is a Hypothesis test in a module of this package, run through the chosen driver like
any scenario; `--properties` sets how hard they look for a counterexample.
"""

from __future__ import annotations

import secrets
from contextlib import AbstractContextManager
from enum import StrEnum
from pathlib import Path
from typing import Final, Protocol

from conformance.driver import Driver

PROPERTIES_DIR: Final = Path(__file__).resolve().parent
OFFICE_MODULE: Final = "test_office_window.py"
OFFICE_EFFECTS_MODULE: Final = "test_office_effects.py"
WORK_REQUEST_MODULE: Final = "test_work_request_machine.py"
MODULE_TITLES: Final = {
    OFFICE_MODULE: "Properties of the office allowance's rolling window",
    OFFICE_EFFECTS_MODULE: "The office capability's observable effects, operation by operation",
    WORK_REQUEST_MODULE: "The work-request state machine",
}
MODEL_MODULES: Final[dict[str, tuple[str, ...]]] = {
    WORK_REQUEST_MODULE: (
        "work_request_machine.py",
        "work_request_state.py",
        "work_request_invariants.py",
        "work_request_judging.py",
        "work_request_delegations.py",
        "work_request_leases.py",
        "work_request_races.py",
        "work_request_terms.py",
    ),
    OFFICE_MODULE: ("rolling_window.py", "office_scenario.py"),
    OFFICE_EFFECTS_MODULE: ("office_effects.py", "office_model.py", "office_operations.py"),
}
"""The product modules of this package a property test's checks live in, beside the test module
itself (which may only expose the test): what the catalogue reads for the readings it cites."""


class Drivers(Protocol):
    """Opens one driver on an empty store per Hypothesis example (the runner's `drivers`
    fixture): Hypothesis runs many examples in one test call, which would share a driver
    opened by a function-scoped fixture."""

    def fresh(self) -> AbstractContextManager[Driver]: ...


def draw_seed() -> int:
    """A Hypothesis seed for a run given none: the run records it, so it can be repeated."""
    return secrets.randbits(32)


class Budget(StrEnum):
    """How hard `conformance run` looks for counterexamples (`--properties`)."""

    NONE = "none"
    CI = "ci"
    THOROUGH = "thorough"


def module_paths() -> list[str]:
    """The property modules, for pytest's command line."""
    return sorted(str(PROPERTIES_DIR / module) for module in MODULE_TITLES)


CI_EXAMPLES: Final = 15
"""The examples each search of the `ci` budget tries (its Hypothesis profile's)."""

RESTARTS_PER_EXAMPLE: Final = {Budget.NONE: 1, Budget.CI: 1, Budget.THOROUGH: 3}
"""How many restarts one example may ask for (None: no limit). A restart through `exec:` costs
a process launch and a handshake (about 0.35 s, as much as a hundred reads), the dearest thing
an example can do: the ci budget keeps one per example (in the examples that may restart at
all: see RESTARTING_EXAMPLES), thorough three. What a restart checks (that everything
acknowledged survives it) is checked whole at each one; what varies is the state it meets,
which the search varies over its examples, not over more restarts in one. Unbounded, a
thorough work-request program of 100 steps restarted 14 times on average, and restarts were
more than half of its time through `exec:`."""

RESTARTING_EXAMPLES: Final = {Budget.NONE: 3, Budget.CI: 3, Budget.THOROUGH: 2}
"""One example in this many may restart at all: an office schedule or a work-request program
draws whether it may, with its other data, so that it shrinks towards none. Through `exec:` a
restart is most of an example's cost: the ci budget spends it on a third of them, thorough on
half."""


def restart_permits(budget: Budget) -> list[bool]:
    """What an example draws from (with `st.sampled_from`) to learn whether it may restart:
    False first, so that shrinking prefers an example without one."""
    return [False] * (RESTARTING_EXAMPLES[budget] - 1) + [True]
