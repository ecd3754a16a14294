"""Root conftest: loads the kit's pytest plugin and the step libraries (see conformance.suite)."""

from conformance.suite import PLUGINS

pytest_plugins = [*PLUGINS, "pytester"]
