"""Root conftest: loads the kit's pytest plugin and the step libraries."""

pytest_plugins = [
    "conformance.pytest_plugin",
    "steps.common",
    "steps.office",
    "steps.work_requests",
    "steps.concurrency",
    "pytester",
]
