"""An alteration made as an edit of one named function (conformance/adapters/edits.py): the copy
runs with the lines replaced, the module stays as it is until the patch is applied, and an edit
that no longer applies to the function as it is fails loudly, naming the function."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from conformance.adapters.edits import EditNoLongerApplies, edited

SOURCE = '''
from __future__ import annotations

LIMIT = 3


def allowed(count: int) -> bool:
    """Whether one more fits under the limit."""
    return count < LIMIT


def twice(count: int) -> int:
    count = count + 1
    count = count + 1
    return count


NOT_A_FUNCTION = 7


class Gate:
    def admits(self, count: int) -> bool:
        return count < LIMIT
'''


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    path = tmp_path / "limits.py"
    path.write_text(textwrap.dedent(SOURCE))
    spec = importlib.util.spec_from_file_location("limits", path)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "limits", loaded)  # as an imported module is found
    spec.loader.exec_module(loaded)
    return loaded


def test_the_copy_runs_with_the_lines_replaced_and_the_module_is_left_as_it_is(
    module: ModuleType,
) -> None:
    patch = edited(module, "allowed", "return count < LIMIT", "return count <= LIMIT")
    inclusive = patch.replacement
    assert callable(inclusive)
    assert inclusive(3) and not module.allowed(3)
    assert (patch.target, patch.attribute) == (module, "allowed")
    assert "allowed (edited)" in patch.describe()


def test_the_copy_reads_the_module_s_globals_as_they_are_when_it_runs(module: ModuleType) -> None:
    inclusive = edited(module, "allowed", "count < LIMIT", "count <= LIMIT").replacement
    assert callable(inclusive)
    module.LIMIT = 1
    assert inclusive(1) and not inclusive(2)


def test_a_method_of_a_class_is_edited_in_place_of_the_class_s_own(module: ModuleType) -> None:
    patch = edited(module.Gate, "admits", "count < LIMIT", "count <= LIMIT")
    assert (patch.target, patch.attribute) == (module.Gate, "admits")
    inclusive = patch.replacement
    assert callable(inclusive)
    assert inclusive(module.Gate(), 3) and not module.Gate().admits(3)


@pytest.mark.parametrize(
    ("function", "old", "why"),
    [
        ("allowed", "return count > LIMIT", "0 times"),
        ("twice", "count = count + 1", "2 times"),
        ("NOT_A_FUNCTION", "7", "is no function"),
    ],
)
def test_an_edit_that_no_longer_applies_fails_naming_the_function(
    module: ModuleType, function: str, old: str, why: str
) -> None:
    with pytest.raises(EditNoLongerApplies, match=why) as refused:
        edited(module, function, old, "pass")
    assert f"limits.{function}" in str(refused.value)
