"""Which Gherkin scenario a collected pytest item runs, if any.

pytest-bdd keeps this in a registry keyed by the test function; the registry
holds weak references, so an item without a function (a doctest, an item of
another plugin) must be asked about safely. One place for this lookup keeps
the kit's three readers of it (the recorder, the feature scope and the
restart forecast) on one footing with pytest-bdd's internals.
"""

from __future__ import annotations

import pytest
from pytest_bdd.parser import ScenarioTemplate
from pytest_bdd.scenario import scenario_wrapper_template_registry
from pytest_bdd.utils import registry_get_safe


def scenario_template(item: pytest.Item) -> ScenarioTemplate | None:
    """The scenario an item runs; None for any other test."""
    return registry_get_safe(scenario_wrapper_template_registry, getattr(item, "obj", None))
