"""How the work-request machine judges an answer, and follows a reading: a refusal or an
acceptance held to the oracle, a call accepted that the model refuses overruled, and a step
that fails only a check of a reading judged again under each alternative the model can
predict by (see `follow`)."""

from __future__ import annotations

import copy
import functools
import inspect
import pickle
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any, cast

from hypothesis.stateful import multiple

from conformance.driver import BudgetSnapshot, ErrorCode
from conformance.oracle.refusals import Refusals
from conformance.oracle.work_request_cites import (
    ACCEPT_CITES,
    MOVES_BUDGET,
    Operation,
    refusal_cites,
    wrong_code_cites,
)
from conformance.oracle.work_requests import FOLLOWED, WorkRequestOracle
from conformance.properties.following import Draws, OffTheTape, Tape, TapedData, replaying
from conformance.properties.surprises import Surprises
from conformance.properties.work_request_invariants import InvariantChecks
from conformance.properties.work_request_terms import CAMPAIGNS, T, attempt, codes, render
from conformance.spec.clause_check import (
    Cite,
    ClauseViolation,
    expect,
    port_requires,
    scenario_requires,
    violated,
)
from conformance.spec.registry import INTERPRETATION_ID, KIT_READING

MAX_FOLLOWED_AT_ONCE = 2
"""How many open questions one step may be found to read otherwise at once."""


def readings_to_try(cites: tuple[str, ...], oracle: WorkRequestOracle) -> Iterator[tuple[str, str]]:
    """Every other reading the model can predict by, of each open question a failed check
    cites: its alternatives first, then the kit's own (for a reading declared otherwise)."""
    for question in cites:
        current = oracle.readings.get(question, KIT_READING)
        names = [*sorted(FOLLOWED.get(question, frozenset())), KIT_READING]
        yield from ((question, name) for name in names if name != current)


def broken_under_every_reading(
    violation: ClauseViolation, breaks: list[ClauseViolation]
) -> ClauseViolation:
    """A step whose answers break a reading's check under the model's reading and clauses under
    every other it can follow, with no alternative left that allows them: the clauses are broken
    whichever reading the implementation follows, so they are what the failure is charged to
    (the readings stay cited beside them, as what the checks rested on)."""
    clauses = [c for b in breaks for c in b.cites if not INTERPRETATION_ID.fullmatch(c)]
    cites = tuple(dict.fromkeys([*clauses, *violation.cites]))
    under = "\n".join(f"- {b.detail}" for b in breaks)
    return violated(
        cites,
        f"{violation.detail}\nJudged again under every other reading the model can follow, "
        f"the answers still break clauses:\n{under}",
    )


def nothing_from(step: Callable[..., T]) -> T:
    """What a step the machine went on past gives Hypothesis: nothing, for a rule that feeds
    no bundle (declared `-> None`), and nothing to add, for one that does."""
    returns_nothing = inspect.signature(step).return_annotation in ("None", None)
    return cast(T, None if returns_nothing else multiple())


def followed_step(step: Callable[..., T]) -> Callable[..., T]:
    """A rule whose answers are judged, with the invariants after it, under the reading the
    model follows, and judged again under another where only a reading's check failed."""

    @functools.wraps(step)
    def judged(machine: JudgingMachine, **arguments: Any) -> T:
        return machine.judged(step, arguments)

    return judged


class JudgingMachine(InvariantChecks):
    """Judging each answer, and following the reading the implementation shows."""

    def teardown(self) -> None:
        """The program ended: every break the invariants noted on the way fails it now."""
        breaks, self.surprises = self.surprises.gathered(), Surprises()
        try:
            self._resources.close()
        finally:
            if breaks is not None:
                self.remember(breaks)
                raise breaks

    def judged(self, step: Callable[..., T], arguments: dict[str, Any]) -> T:
        """Run a step and the invariants; where only a reading's check failed, look for the
        reading the implementation follows (see `follow`)."""
        before = self.model_state()
        self.tape = Tape()
        taped = {
            name: TapedData(value, self.tape) if isinstance(value, Draws) else value
            for name, value in arguments.items()
        }
        try:
            try:
                return self.checked(step, taped)
            except ClauseViolation as violation:
                if not violation.interpretations_only:
                    raise
                noted, written = copy.deepcopy(self.surprises), copy.deepcopy(self.scenario)
                try:
                    return self.follow(step, taped, before, violation, 1)
                except ClauseViolation as unexplained:
                    # No reading explains the step: what its first pass noted and wrote stands
                    # (the search restored the state from before the step, notes and all).
                    self.surprises, self.scenario = noted, written
                    self.scenario.note()  # the tries under other readings noted theirs
                    if unexplained.interpretations_only or self.made_unseen():
                        raise
                    return self.past_unexplained(step, unexplained)
        except ClauseViolation as violation:
            if not self.surprises.first:
                self.remember(violation)
                raise
            self.surprises.note(violation, "the step that stopped the program")
            breaks = cast(ClauseViolation, self.surprises.gathered())
            self.surprises = Surprises()  # raised here, so not again at the teardown
            self.remember(breaks)
            raise breaks from violation

    def past_unexplained(self, step: Callable[..., T], unexplained: ClauseViolation) -> T:
        """A step that breaks a clause under every reading the model can follow: the break is
        noted, the model takes what the implementation now reads (it stands where it stood
        before the step), and the program goes on from there."""
        self.surprises.note(unexplained, "a step no reading explains")
        self.adopt_overruled()
        self.keep_invariants()
        return nothing_from(step)

    def made_unseen(self) -> bool:
        """Whether the implementation holds a session the machine never saw made: a step that
        made one (a delegation accepted where no reading accepts it) left a request no read
        of the known ones shows, so the model cannot go on from it."""
        return any(
            view.session_id not in self.campaign_of
            for campaign in CAMPAIGNS
            if not isinstance(self.oracle.budget(campaign), ErrorCode)
            for view in self.read(
                f"list_sessions({campaign})", partial(self.driver.list_sessions, campaign), None
            )
        )

    def remember(self, violation: ClauseViolation) -> None:
        """Keep the search's first violation, and the program that showed it (see `seen`)."""
        if not type(self).seen:
            type(self).seen.append((violation, self.scenario.text()))

    def checked(self, step: Callable[..., T], arguments: dict[str, Any]) -> T:
        result = step(self, **arguments)
        if self.overruled:
            self.adopt_overruled()
        self.keep_invariants()
        return result

    def adopt_overruled(self) -> None:
        """After a call accepted that the model refused (see `overrule`): the model takes every
        request's lease, spending and completion, and every campaign's figures, as read now."""
        self.overruled = False
        self.observed.clear()
        views = [self.read_request(request_id) for request_id in self.request_ids]
        campaigns = [c for c in CAMPAIGNS if not isinstance(self.oracle.budget(c), ErrorCode)]
        self.adopt_observed(views, [self.read_budget(campaign) for campaign in campaigns])

    def follow(
        self,
        step: Callable[..., T],
        arguments: dict[str, Any],
        before: bytes,
        violation: ClauseViolation,
        depth: int,
    ) -> T:
        """Judge the step again from `before` under each other reading of the questions the
        failed check rests on; adopt the first that explains every answer. None does: the
        check's failure stands, allowed only by the readings the machine could not judge (the
        machine stops at a divergence it cannot follow)."""
        oracle_before = pickle.loads(before)["oracle"]
        readings_before = dict(oracle_before.readings)
        ruled_out = {q: {oracle_before.readings.get(q, KIT_READING)} for q in violation.cites}
        breaks: list[ClauseViolation] = []
        unjudged = False
        for question, name in readings_to_try(violation.cites, oracle_before):
            following = pickle.loads(before)
            following["oracle"].follow(question, name)
            state = pickle.dumps(following)
            try:
                result = self.again(step, arguments, state)
            except OffTheTape:
                unjudged = True
                continue
            except ClauseViolation as again:
                alone = set(again.cites) <= {question}
                if not again.interpretations_only or alone or depth >= MAX_FOLLOWED_AT_ONCE:
                    ruled_out[question].add(name)
                    breaks += [again] if not again.interpretations_only else []
                    unjudged |= again.interpretations_only and not alone
                    continue
                try:
                    result = self.follow(step, arguments, state, again, depth + 1)
                except (ClauseViolation, OffTheTape):
                    unjudged = True
                    continue
            if depth == 1:
                self.note_also_explaining(step, arguments, before, violation, (question, name))
            self.record_divergences(readings_before)
            return result
        self.restore(before)
        narrowed = violation.narrowed(ruled_out)
        if breaks and not unjudged and not narrowed.explained:
            raise broken_under_every_reading(narrowed, breaks)
        self.keep_reading_free_invariants()
        raise narrowed

    def note_also_explaining(
        self,
        step: Callable[..., T],
        arguments: dict[str, Any],
        before: bytes,
        violation: ClauseViolation,
        followed: tuple[str, str],
    ) -> None:
        """Every other single reading, of a question the implementation does not declare, that
        explains the step too is a divergence as well: which of them the implementation follows,
        this step cannot tell (a remainder sent straight to the campaign is WR-15's to-campaign
        and, in some programs, WR-1's from-campaign alike), so the run names each; the model
        goes on by the first."""
        chosen = self.model_state()
        oracle_before = pickle.loads(before)["oracle"]
        for question, name in readings_to_try(violation.cites, oracle_before):
            if (question, name) == followed or question in type(self).declared:
                continue
            following = pickle.loads(before)
            following["oracle"].follow(question, name)
            try:
                self.again(step, arguments, pickle.dumps(following))
            except (ClauseViolation, OffTheTape):
                continue
            self.tape.say(f"(the implementation may read {question} as {name} as well)")
            if name != type(self).declared.get(question, KIT_READING):
                type(self).divergences.setdefault(question, set()).add(name)
        self.restore(chosen)

    def again(self, step: Callable[..., T], arguments: dict[str, Any], state: bytes) -> T:
        self.restore(state)
        judging_again, self.judging_again = self.judging_again, True
        try:
            with replaying(self.tape):
                return self.checked(step, arguments)
        finally:
            self.judging_again = judging_again

    def record_divergences(self, before: dict[str, str]) -> None:
        """Note each reading the model now follows that it did not before the step."""
        for question, name in self.oracle.readings.items():
            if before.get(question) == name:
                continue
            self.tape.say(f"(the implementation reads {question} as {name}; followed from here)")
            if name != type(self).declared.get(question, KIT_READING):
                type(self).divergences.setdefault(question, set()).add(name)

    def model_state(self) -> bytes:
        """The machine's own state, pickled: taken before every step and read back only where
        a step is judged again (pickling is a fraction of a deep copy's cost)."""
        fields = {name: getattr(self, name) for name in self.model_fields}
        return pickle.dumps(fields, protocol=pickle.HIGHEST_PROTOCOL)

    def restore(self, state: bytes) -> None:
        for name, value in pickle.loads(state).items():
            setattr(self, name, value)

    def judge(
        self,
        what: str,
        operation: Operation,
        answer: object,
        refusals: Refusals,
        *,
        optional: Refusals = frozenset(),
        accepting: Cite | None = None,
        resting_on: Mapping[ErrorCode, str] | None = None,
    ) -> bool:
        """Hold one answer to the refusals that apply, noting it for the shortest program;
        whether the model stands (False: the call was overruled, see `overrule`).

        A refusal needs a reason that applies and must carry one of the
        applicable codes (any of them: the spec ranks none). An acceptance needs
        every applicable refusal to be `optional`, one the implementation may
        meet otherwise (a narrowed grant, the holder's own lease). `resting_on` names a
        refusal whose condition here a reading decides: accepted where the model requires it,
        or answered where the model does not, it breaks that reading alone.
        """
        self.tape.say(f"{what} -> {render(answer)}")
        reading = (resting_on or {}).get(answer) if isinstance(answer, ErrorCode) else None
        if reading is not None and answer not in refusals:
            raise violated(
                reading,
                f"{what}: refused {render(answer)}; the refusals that apply are {codes(refusals)}",
            )
        if isinstance(answer, ErrorCode):
            # Refused, the call changed nothing in the model: a wrong refusal is noted and the
            # program goes on, the model and the implementation agreeing that nothing happened
            # (what the implementation did all the same, the reads after the step show).
            self.going_on(
                what,
                partial(
                    expect,
                    bool(refusals),
                    accepting or ACCEPT_CITES[operation],
                    f"{what}: refused {answer.value}, yet nothing forbids it",
                ),
            )
            if refusals:
                self.going_on(
                    what,
                    partial(
                        expect,
                        answer in refusals,
                        wrong_code_cites(operation, refusals),
                        f"{what}: refused {answer.value}; the refusals that apply are "
                        f"{codes(refusals)}",
                    ),
                )
            return True
        if operation in MOVES_BUDGET:
            self.observed.clear()
        required = refusals - optional
        if not required:
            return True
        cites = tuple(
            dict.fromkeys(
                cite
                for code in sorted(required)
                for cite in (
                    ((resting_on or {})[code],)
                    if code in (resting_on or {})
                    else refusal_cites(operation, frozenset({code}))
                )
            )
        )
        violation = violated(
            cites, f"{what}: accepted ({render(answer)}); it must be refused: {codes(required)}"
        )
        if self.stops_at(violation):
            raise violation
        self.overrule(violation, what)
        return False

    def overrule(self, violation: ClauseViolation, during: str) -> None:
        """A call the model refuses was accepted: the break is noted (see `going_on`), the step
        ends there, and before the invariants judge anything after it the model takes what the
        implementation reads of every request and campaign (`adopt_overruled`), so the call's
        effects are judged by the reads that show them, never blamed again on the clauses
        they would break in a model that refused it. A delegation so accepted is recorded as
        made first (`adopt_overruled_delegation`): what it drew from its originator's slice no
        read shows, so the model draws it as an accepted delegation does."""
        self.surprises.note(violation, during)
        self.overruled = True

    def check_drawn(self, what: str, before: BudgetSnapshot, part: str, change: int) -> None:
        """One part of the campaign's budget moved by exactly `change` in one accepted operation:
        a root's slice leaves what is available (001.1), usage adds to what is spent (001.13)."""
        after = self.read(
            f"budget({before.campaign_id})", partial(self.driver.budget, before.campaign_id), None
        )
        self.observed[before.campaign_id] = after
        moved = getattr(after, part) - getattr(before, part)
        cite = {
            "available": "AC-ARMONIA-WORKREQ-001.1/slice-deducted",
            "spent": "AC-ARMONIA-WORKREQ-001.13/usage-draws-on-campaign",
        }[part]
        expect(moved == change, cite, f"{what} moved {part} by {moved}: {before!r} -> {after!r}")

    def setup_step(self, what: str, call: Callable[[], None], predicted: ErrorCode | None) -> None:
        """A setup call the machine's world needs: valid by the model, so it must succeed."""
        scenario_requires(predicted is None, f"{what}: the machine's own setup is invalid")
        answer = attempt(call)
        self.tape.say(f"{what} -> {render(answer)}")
        port_requires(answer is None, f"{what}: a valid setup call was {render(answer)}")
