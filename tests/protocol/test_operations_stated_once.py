"""Each port operation is stated once, in `Driver`: the wire's arguments and results, and the
exec driver's methods, are read off its signatures, so a second hand-written statement fails.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import get_type_hints

import pytest

from conformance.adapters.exec_adapter import ExecDriver
from conformance.driver import Driver
from conformance.protocol import messages as m

PORT_OPERATIONS = sorted(name for name in m.OPERATIONS if hasattr(Driver, name))
WIRE_ONLY_ARGS = {"Args", "NoArgs", "AdvanceClockArgs"}
"""The argument models written by hand: the base, the empty one, and the clock step, whose
wire form (whole microseconds) is not the port's (a timedelta)."""
KEEPS_SOMETHING = {
    "set_clock",
    "advance_clock",
    "create_task",
    "create_environment",
    "warning_logs",
}
"""The exec driver's methods that keep something besides passing the call on: the clock it
restores after a restart, the witnesses of a reset, the warning logs carried over a restart."""


def defined_classes(module: Path) -> dict[str, list[str]]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return {
        node.name: [ast.unparse(base) for base in node.bases]
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }


def test_no_argument_model_is_written_by_hand_but_the_wire_s_own() -> None:
    written = {
        name
        for name, bases in defined_classes(Path(m.__file__)).items()
        if name == "Args" or "Args" in bases
    }
    assert written == WIRE_ONLY_ARGS


@pytest.mark.parametrize("name", [n for n in PORT_OPERATIONS if n != "advance_clock"])
def test_an_operation_s_arguments_and_result_are_its_port_method_s(name: str) -> None:
    method = getattr(Driver, name)
    parameters = list(inspect.signature(method).parameters)[1:]
    operation = m.OPERATIONS[name]
    assert list(operation.args.model_fields) == parameters
    assert operation.result == get_type_hints(method)["return"]


@pytest.mark.parametrize("name", PORT_OPERATIONS)
def test_the_exec_driver_passes_each_operation_on_unless_it_keeps_something(name: str) -> None:
    """Passed on means not written in the exec driver at all: its `__getattr__` forwards it."""
    forwarded = name not in vars(ExecDriver)
    assert forwarded != (name in KEEPS_SOMETHING), name
    assert callable(getattr(_unsent(), name))


def test_the_exec_driver_forwards_port_operations_only() -> None:
    """A name that is no port operation (a typo inside the driver, a wire-only operation) is
    an AttributeError, never a call sent."""
    driver = _unsent()
    for name in ("handshake", "reset", "assign_tsk", "_call_somewhere"):
        with pytest.raises(AttributeError, match=name):
            getattr(driver, name)


def test_a_forwarded_call_is_bound_as_the_port_declares_it() -> None:
    """A call the port would refuse (a missing or unknown argument) is refused before it is
    sent, with the port's own words."""
    with pytest.raises(TypeError, match="acting_agent_id"):
        _unsent().assign_task("t-1", "a-1")  # type: ignore[call-arg]


def _unsent() -> ExecDriver:
    driver = object.__new__(ExecDriver)
    driver._call = lambda operation, args: pytest.fail("sent a call the port refuses")  # type: ignore[method-assign]
    return driver
