"""The work-request machine's program, written as a Gherkin scenario while it runs.

Every step the machine takes (the world it builds, delegations, claims, heartbeats,
publishes, usage, clock moves, restarts, listings) is written in the features' own step
language, with the outcome the model predicts: an operation the model says must be refused
becomes `... tries to ...` and `Then the attempt is refused with ... and nothing changes`;
one it accepts (or may accept, and the implementation did) becomes the step that needs it,
so that a refusal fails the scenario at the next step. The scenario ends by checking that
every campaign's budget is conserved. Requests are named `r1`, `r2`, ... in the order they
were made, child sessions by their request; the machine's environments, campaigns and root
sessions have names apart from the Background's, so that the scenario can be pasted into the
work-request feature file beside it.

The machine notes the scenario after every step; Hypothesis keeps the notes of the shrunk
example it reports, and the last of them is the whole program up to the failure. What it
does not reproduce: a delegation's acceptance checks (the steps use the features' own), and
a failure found only by comparing a request's every field with the model's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta

from conformance.driver import DelegationKind, ErrorCode, Permissions
from conformance.properties.following import note_if_searching
from conformance.properties.gherkin import CRITERION_PLACEHOLDER, SCENARIO_NOTE, Steps

Refusals = frozenset[ErrorCode]


class WorkRequestScenario:
    def __init__(self) -> None:
        self._steps: list[str] = []
        self._writer = Steps(self._steps)
        self._names: dict[str, str] = {}
        """Request id -> its name in the scenario."""
        self._served_by: dict[str, str] = {}
        """Child session id -> the name of the request it serves."""
        self._campaigns: list[str] = []

    # -- the world -------------------------------------------------------------------
    def world(
        self,
        start: datetime,
        members: Mapping[str, tuple[str, ...]],
        campaigns: Mapping[str, tuple[str, int]],
        roots: Mapping[str, tuple[str, str, Permissions]],
    ) -> None:
        self._given(f'the clock reads "{start.isoformat().replace("+00:00", "Z")}"')
        for environment, names in members.items():
            listed = ", ".join(f'"{name}"' for name in names[:-1])
            listed = f'{listed} and "{names[-1]}"' if listed else f'"{names[-1]}"'
            self._given(f'an environment "{environment}" whose members are {listed}')
        for campaign, (environment, budget) in campaigns.items():
            self._campaigns.append(campaign)
            self._given(f'a campaign "{campaign}" in "{environment}" with a budget of {budget}')
        for session, (campaign, principal, permissions) in roots.items():
            self._given(
                f'a root session "{session}" of "{principal}" in "{campaign}" '
                f"granting {grants(permissions)}"
            )
        self.note()

    def processes(self, count: int) -> None:
        """A note, not a step: the batches were dealt over `count` processes on one store,
        which the Gherkin's own steps do only for a race program's world."""
        self._steps.append(f"  # served by {count} processes of the implementation on one store")

    # -- operations ------------------------------------------------------------------
    def delegation(
        self,
        origin: str,
        kind: DelegationKind,
        budget_slice: int,
        permissions: Permissions,
        assignee: str | None,
        deliverable: str,
        outcome: Outcome,
    ) -> None:
        name = f"r{len(self._names) + 1}"
        tail = (
            f'"{name}" by {kind.value} with a slice of {budget_slice} granting '
            f"{grants(permissions)}"
            + (f' for "{assignee}"' if assignee is not None else "")
            + f' to deliver "{deliverable}"'
        )
        session = self.session(origin)
        self._operation(
            f"{session} delegates {tail}", f"{session} tries to delegate {tail}", outcome
        )
        if outcome.created is not None:
            request_id, child = outcome.created
            self._names[request_id] = name
            self._served_by[child] = name

    def claim(self, request_id: str, holder: str, outcome: Outcome) -> None:
        name = self._names[request_id]
        self._operation(
            f'"{holder}" claims "{name}"', f'"{holder}" tries to claim "{name}"', outcome
        )

    def heartbeat(self, request_id: str, holder: str, generation: int, outcome: Outcome) -> None:
        name = self._names[request_id]
        self._operation(
            f'"{holder}" heartbeats "{name}"',
            f'"{holder}" tries to heartbeat "{name}" at generation {generation}',
            outcome,
        )

    def publish(
        self, request_id: str, holder: str, generation: int, result: str, outcome: Outcome
    ) -> None:
        name = self._names[request_id]
        self._operation(
            f'"{holder}" publishes "{name}" with result "{result}"',
            f'"{holder}" tries to publish "{name}" at generation {generation} with result '
            f'"{result}"',
            outcome,
        )

    def retry(self, request_id: str, holder: str, result: str) -> None:
        """An exact retry of the recorded completion."""
        name = self._names[request_id]
        self._when(f'"{holder}" publishes "{name}" with result "{result}" again')
        self.note()

    def usage(self, session: str, amount: int, outcome: Outcome) -> None:
        origin = self.session(session)
        self._operation(
            f"{origin} records usage of {amount}",
            f"{origin} tries to record usage of {amount}",
            outcome,
        )

    # -- races -------------------------------------------------------------------
    def delegation_race(
        self,
        origin: str,
        kind: DelegationKind,
        budget_slice: int,
        permissions: Permissions,
        created: list[tuple[str, str]],
        asked: int,
        usages: Sequence[int] = (),
    ) -> None:
        """Delegations made at once, a child's with usages of its own slice among them, all of
        which fit: named in the order they were made."""
        first = len(self._names) + 1
        names = [f"r{first + index}" for index in range(asked)]
        quoted = listing(f'"{name}"' for name in names)
        if usages:
            self._when(
                f"{self.session(origin)} records usages of {listing(map(str, usages))} at once "
                f"while delegating {quoted} by {kind.value} with a slice of {budget_slice}"
            )
            self._then("every usage and delegation made at once was accepted")
        else:
            self._when(
                f"{self.session(origin)} delegates {quoted} "
                f"at once, each by {kind.value} with a slice of {budget_slice} granting "
                f"{grants(permissions)}"
            )
        for (request_id, child), name in zip(created, names, strict=False):
            self._names[request_id] = name
            self._served_by[child] = name
        self.note()

    def usage_race(self, session: str, amounts: list[int]) -> None:
        """Usages made at once: their outcome is the race's, so the steps check the ledger."""
        origin = self.session(session)
        name = self._served_by.get(session, session)
        self._when(f"{origin} records usages of {listing(map(str, amounts))} at once")
        self._then(
            f'the usages made at once charged "{name}" what the accepted ones asked, and never '
            "more than its slice"
        )
        self._then(
            f'as WR-2 reads it, "{name}" was charged exactly what the accepted usages made at '
            "once asked"
        )
        self.note()

    def sibling_race(self, request_ids: list[str], amounts: list[int]) -> None:
        """Usages by the children of several requests, all at once."""
        names = [self._names[request_id] for request_id in request_ids]
        quoted = listing(f'"{name}"' for name in names)
        self._when(
            f"the child sessions of {quoted} each record usages of {listing(map(str, amounts))}, "
            "all at once"
        )
        self._then(
            f'the usages made at once charged "{names[0]}" what the accepted ones asked, and '
            "never more than its slice"
        )
        self.note()

    def spending_race(
        self, session: str, amounts: list[int], holder: str, request_id: str, result: str
    ) -> None:
        """The child's usages with the holder's publish, all at once."""
        origin = self.session(session)
        name = self._names[request_id]
        self._when(
            f"{origin} records usages of {listing(map(str, amounts))} at once while "
            f'"{holder}" publishes "{name}" with result "{result}"'
        )
        self._then(
            f'what "{name}" spent and what its completion gave back never add up to more than '
            "was left of its slice"
        )
        self.note()

    def publish_race(self, request_id: str, holder: str, generation: int, refs: list[str]) -> None:
        name = self._names[request_id]
        results = listing(f'"{ref}"' for ref in refs)
        self._when(
            f'"{holder}" publishes "{name}" at generation {generation} with results {results} '
            "at once"
        )
        self._then(
            f'the publishes made at once completed "{name}" at most once, and every one accepted '
            "answered that completion"
        )
        self.note()

    def lease_race(self, request_id: str, holder: str, rivals: list[str], result: str) -> None:
        """A claim, then at once rivals' claims with the holder's heartbeat and publish (the
        claim's own refusal is written as any claim's, and no batch follows it)."""
        name = self._names[request_id]
        claimants = listing(f'"{rival}"' for rival in rivals)
        verb = "claims" if len(rivals) == 1 else "claim"
        self._when(
            f'"{holder}" claims "{name}", then at once {claimants} {verb} it while "{holder}" '
            f'heartbeats and publishes it with result "{result}"'
        )
        self._then(
            f'the claims, heartbeat and publish made at once on "{name}" granted no second lease '
            "and completed it at most once"
        )
        self.note()

    def clock(self, delta: timedelta) -> None:
        whole, micros = divmod(delta // timedelta(microseconds=1), 1_000_000)
        parts = [f"{whole} seconds"] if whole else []
        parts += [f"{micros} microseconds"] if micros or not parts else []
        self._when(f"{' and '.join(parts)} pass")
        self.note()

    def restart(self) -> None:
        self._when("the implementation restarts")
        self.note()

    def listing(self, environment: str, principal: str, refused: bool) -> None:
        self._when(f'"{principal}" tries to list the requests of "{environment}"')
        if refused:
            self._then("the listing is refused and nothing changes")
        self.note()

    def session(self, session_id: str) -> str:
        served = self._served_by.get(session_id)
        return f'the child session of "{served}"' if served else f'session "{session_id}"'

    # -- writing ---------------------------------------------------------------------
    def text(self) -> str:
        closing = [f'the budget of "{campaign}" is conserved' for campaign in self._campaigns]
        lines = [
            f"@{CRITERION_PLACEHOLDER}",
            "Scenario: a program of delegations, claims, heartbeats and publishes, as a "
            "counterexample showed",
            *self._steps,
        ]
        writer = Steps(lines, last=self._writer.last)
        for check in closing:
            writer.add("Then", check)
        return "\n".join(lines)

    def _operation(self, needing: str, trying: str, outcome: Outcome) -> None:
        """The step the model's outcome calls for (see the module's docstring)."""
        if outcome.must_refuse or outcome.refused_as_allowed:
            self._when(trying)
            self._then(f"the attempt is refused with {codes(outcome.allowed)} and nothing changes")
        else:
            self._when(needing)
        self.note()

    def _given(self, text: str) -> None:
        self._writer.add("Given", text)

    def _when(self, text: str) -> None:
        self._writer.add("When", text)

    def _then(self, text: str) -> None:
        self._writer.add("Then", text)

    def note(self) -> None:
        """Hand the program so far to Hypothesis, whose report shows the last one noted."""
        note_if_searching(SCENARIO_NOTE + self.text())


class Outcome:
    """What the model says of one operation, and what the implementation answered."""

    def __init__(
        self,
        answer: object,
        refusals: Refusals,
        optional: Refusals = frozenset(),
        created: tuple[str, str] | None = None,
    ) -> None:
        self.allowed = refusals
        self.must_refuse = bool(refusals - optional)
        self.refused_as_allowed = isinstance(answer, ErrorCode) and answer in optional
        self.created = created
        """(request id, child session id) of a delegation the implementation accepted."""


def listing(items: Iterable[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    parts = list(items)
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def grants(permissions: Permissions) -> str:
    parts = []
    if permissions.tools:
        parts.append(f'tools "{", ".join(sorted(permissions.tools))}"')
    if permissions.devices:
        parts.append(f'devices "{", ".join(sorted(permissions.devices))}"')
    return " and ".join(parts) or "nothing"


def codes(refusals: Refusals) -> str:
    return " or ".join(f'"{code.value}"' for code in sorted(refusals))
