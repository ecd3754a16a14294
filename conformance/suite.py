"""Where the Gherkin suite lives, and how pytest is pointed at it, installed or in a checkout.

The feature files stay at the top of the repository; `conformance/features` links to them,
and a wheel carries a copy there. So do the packages beside the harness: `conformance/steps`,
`reference`, `mutants` and `variants` link to the top-level folders, so that an installed kit
owns one import name, `conformance`, and a user's own `steps` or `reference` package cannot
shadow the kit's. So `conformance run` needs nothing from the folder it runs in: its pytest
configuration (suite.ini) and its plugins travel with the package, and no conftest.py is read
(`--noconftest`), so a file dropped into the kit's folders cannot join the suite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from conformance.properties import Budget, module_paths

PACKAGE_DIR: Final = Path(__file__).resolve().parent
FEATURES_DIR: Final = PACKAGE_DIR / "features"
SUITE_INI: Final = PACKAGE_DIR / "suite.ini"
PLUGINS: Final = (
    "conformance.running.pytest_plugin",
    "conformance.running.step_lookup",
    "conformance.running.frozen_heap",
    "conformance.running.properties_plugin",
    "conformance.steps.common",
    "conformance.steps.office_scene",
    "conformance.steps.office_actions",
    "conformance.steps.office_checks",
    "conformance.steps.office_telemetry",
    "conformance.steps.concurrency",
    "conformance.steps.workreq_world",
    "conformance.steps.workreq_actions",
    "conformance.steps.workreq_batch_actions",
    "conformance.steps.workreq_checks",
    "conformance.steps.workreq_race_checks",
    "conformance.steps.workreq_lease_checks",
    "conformance.steps.workreq_contract_checks",
)
"""The kit's plugin and the step libraries, loaded by name (the checkout's conftest.py too)."""


def steps_dir() -> Path:
    """Beside the package's own modules, unresolved: in a checkout it is a link to the top-level
    `steps/`, and pytest must import the modules there as `conformance.steps`."""
    return PACKAGE_DIR / "steps"


def pytest_arguments(properties: Budget = Budget.NONE) -> list[str]:
    """The arguments that run the suite's scenarios, and its properties on the budget given,
    whatever the working folder."""
    modules = [] if properties is Budget.NONE else module_paths()
    arguments = [
        str(steps_dir() / "test_features.py"),
        *modules,
        f"--properties={properties.value}",
        f"--rootdir={PACKAGE_DIR}",
        "-c",
        str(SUITE_INI),
        "--noconftest",
    ]
    for plugin in PLUGINS:
        arguments += ["-p", plugin]
    return arguments
