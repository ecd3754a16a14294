"""The Then steps an office schedule's counterexample states after each wake, in the features'
own phrasing, so a pasted scenario checks what the search checked."""

from __future__ import annotations

from typing import Final

from conformance.driver import Outcome
from conformance.properties.gherkin import Steps
from conformance.properties.office_model import Expected

LABEL_SCAN: Final = (
    "no label of the rate-limit counter holds an identifier of a workspace, agent, task or run"
)


def then_outcome(steps: Steps, expected: Expected, merged: bool) -> None:
    """The wake's outcome, or both the model's and a merge where the wake was merged."""
    if expected.outcomes == {None}:
        steps.add("Then", "the assignment produced no wake")
        return
    shown = sorted(o.value for o in expected.outcomes if o is not None)
    if merged:
        shown = [shown[0], Outcome.COALESCED.value]
    steps.add("Then", "the wake's outcome is " + " or ".join(f'"{o}"' for o in shown[:2]))


def then_effects(steps: Steps, expected: Expected) -> None:
    """The counter moves, the warning with its fields, the queue kept and the label scan."""
    if expected.moves:
        moves = " and ".join(f"{reason.value} +{n}" for reason, n in expected.moves.items())
        steps.add("Then", f"the rate-limit counters moved by that wake by: {moves}")
    else:
        steps.add("Then", "no rate-limit counter moved by that wake")
    warning = expected.warning
    if warning is not None:
        steps.add("Then", f"a warning logged by that wake names the {warning.kind} with:")
        rows = {**warning.carried}
        if warning.observed_count is not None:
            rows["observed_count"] = str(warning.observed_count)
        steps.table(("field", "value"), rows)
        for name in warning.absent:
            steps.add("Then", f'that warning has no "{name}" field')
        for name in warning.non_empty:
            steps.add("Then", f'that warning has a non-empty "{name}" field')
    if expected.refused:
        steps.add("Then", "the run queue is exactly as it was before that wake")
    steps.add("Then", LABEL_SCAN)
