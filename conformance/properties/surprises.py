"""The breaks a model met in one example, kept so that it goes on to the example's end.

A model that stops at its first surprise hides everything after it: one wrong field check
once masked a real coalescing failure. So a model notes each break, adopts the
implementation's observable state, and goes on; at the end of the example the breaks fail
together, one violation per distinct set of clauses. Hypothesis tells failures apart by their
exception's type and place: each distinct set of broken clauses gets a type of its own, so a
search reports (and shrinks) each distinct combination of breaks separately, never letting the
easiest one stand for the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.spec.clause_check import ClauseViolation, violation_type
from conformance.spec.registry import default_registry


@dataclass
class Surprises:
    """Each clause a break cited, with the first account of it; and each reading a check of
    readings alone failed on, with the alternatives that allow what was seen."""

    first: dict[str, str] = field(default_factory=dict)
    allowed: dict[str, set[str]] = field(default_factory=dict)

    def note(self, violation: ClauseViolation, during: str) -> None:
        """A check resting on a clause and a reading at once breaks the clause alone."""
        if violation.interpretations_only:
            for question, names in violation.allowed.items():
                self.allowed.setdefault(question, set(names)).intersection_update(names)
            cites = violation.cites
        else:
            cites = tuple(c for c in violation.cites if c not in violation.allowed)
        for cite in cites:
            self.first.setdefault(cite, f"at {during}: {violation.detail}")

    def raise_if_any(self, after: BaseException | None = None) -> None:
        """The breaks noted, as one violation; `after`: what stopped the example, noted on it."""
        breaks = self.gathered()
        if breaks is None:
            return
        if after is not None:
            breaks.add_note(f"then the example stopped: {type(after).__name__}: {after}")
        raise breaks from after

    def gathered(self) -> ClauseViolation | None:
        """The breaks noted, as one violation whose type is their set of clauses."""
        if not self.first:
            return None
        cites = tuple(sorted(self.first))
        accounts = list(dict.fromkeys(self.first[cite] for cite in cites))
        detail = "\n".join(accounts)
        if len(accounts) > 1:
            detail = f"{len(accounts)} distinct breaks, the schedule went on past each:\n{detail}"
        gathered = violation_type(cites, readings_apart=True)
        return gathered(cites, detail, default_registry(), allows=self.allowed)
