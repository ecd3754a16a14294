"""Root conftest: loads the kit's pytest plugin and the step libraries."""

pytest_plugins = [
    "conformance.pytest_plugin",
    "steps.common",
    "steps.office_scene",
    "steps.office_actions",
    "steps.office_checks",
    "steps.office_telemetry",
    "steps.concurrency",
    "steps.workreq_world",
    "steps.workreq_actions",
    "steps.workreq_checks",
    "pytester",
]
