"""A mutant or a variant as an edit of one named function of the reference (or one method of a
class of it): a few of its lines replaced in a copy of its source, compiled against the module
it lives in.

A function copied whole to change one line keeps testing the reference as it was when it was
copied; an edit is made from the reference as it is, and one whose lines the function no longer
holds fails loudly (`EditNoLongerApplies`) wherever the alteration is opened, in CI first
(tests/mutants/test_mutants.py and tests/variants/test_variants.py open every one).
"""

from __future__ import annotations
import __future__

import inspect
import sys
import textwrap
from types import FunctionType, ModuleType

from conformance.adapters.patched import Patch

FUTURE_ANNOTATIONS = __future__.annotations.compiler_flag
"""The reference's modules postpone their annotations; an edited copy must do as they do."""


class EditNoLongerApplies(LookupError):
    """The function no longer holds the lines an edit replaces, exactly once."""


def edited(owner: ModuleType | type, function: str, old: str, new: str) -> Patch:
    """`owner.function` with the lines `old` (found exactly once in its source) replaced by
    `new`: a patch that installs the edited copy, whose globals are its module's own, so it
    calls what the module calls (and what another patch put there). A method that calls
    `super()` without arguments cannot be copied so: its copy has no class to call it from."""
    module = owner if isinstance(owner, ModuleType) else sys.modules[owner.__module__]
    where = f"{owner.__name__}.{function}"
    original = vars(owner).get(function)
    if not isinstance(original, FunctionType):
        raise EditNoLongerApplies(f"{where} is no function")
    source = textwrap.dedent(inspect.getsource(original))
    found = source.count(textwrap.dedent(old))
    if found != 1:
        raise EditNoLongerApplies(
            f"{where} holds the lines to replace {found} times, not once: "
            f"the edit no longer applies to the reference as it is\n{textwrap.dedent(old)}"
        )
    copy = source.replace(textwrap.dedent(old), textwrap.dedent(new))
    code = compile(copy, f"<{where}, edited>", "exec", flags=FUTURE_ANNOTATIONS, dont_inherit=True)
    made: dict[str, object] = {}
    exec(code, vars(module), made)  # the def lands in `made`; the module is left as it is
    replacement = made[function]
    if isinstance(replacement, FunctionType):
        replacement.__qualname__ = f"{original.__qualname__} (edited)"
    return Patch(owner, function, replacement)
