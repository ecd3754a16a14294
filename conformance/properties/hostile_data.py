"""The data a wrong filter, a lenient reading or a substring match would get wrong, in one place.

The models draw from these pools, and the Gherkin's tables use values from them (a test holds
the features to it), so a scenario and a model can never test with kinder data than each other.
Each pool says which wrong implementation it is there to tell from a right one.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from hypothesis import strategies as st

from conformance.driver import Permissions
from conformance.properties.weighted import weighted

# --------------------------------------------------------------------------
# Office: who acts, which tasks, and the payloads the gate must read exactly
# --------------------------------------------------------------------------

OFFICE_WORKSPACE: Final = "acme"
ACTING_AGENTS: Final = ("ada", "bob")
"""Agents who may assign tasks: they act on mutations, and are assigned as well."""
ASSIGNEES: Final = ("ada", "bob", "cy", "dee")
"""Agents a task is assigned to. None differs from another only in case: the gate never compares
agent ids (the allowance is the task's, 001.3), and how the coalescer groups wakes, which does,
is outside this spec (OF-3, retired)."""
OFFICE_TASKS: Final = ("T-100", "T-1000", "T-200", "t-100", "T-100 ")
"""T-100 is a prefix of T-1000: a count matching task ids by prefix (or `LIKE`) mixes them;
"t-100" and "T-100 " are T-100 to a case-insensitive collation that pads with spaces (MySQL's
and MariaDB's defaults): a count comparing ids that way mixes them too. The Gherkin creates
no task outside this pool (tests/features/test_office_hostile_data.py)."""

BLANK_TASK_ID: Final = " "
"""A task id of spaces: a string, and not an empty one, so it names a task (002.3); a reading
that trims before it tests for emptiness takes it for none. Raw wakes only: no task is created
under it."""

NOT_AGENT_ACTOR_TYPES: Final[tuple[Any, ...]] = (
    "user",
    "Agent",
    " agent",
    "agent ",
    "AGENT",
    "agents",
    "",
    None,
    1,
)
"""Actor types that are not exactly "agent": a case-insensitive, trimming or prefix comparison
takes one of them for an agent."""

OTHER_REASONS: Final = ("task_comment", "task_mentioned", "task_assigned_retry", "TASK_ASSIGNED")
"""Reasons that are not task_assigned, some of them close to it: a count over every reason, or
a prefix or case-insensitive match on the reason, counts them."""

UNATTRIBUTED_TASK_IDS: Final[tuple[Any, ...]] = (
    None,
    "",
    100,
    42,
    7,
    True,
    ["T-100"],
    {"id": "T-100"},
)
"""task_id values that name no task (absent is drawn besides): a reading that coerces a number,
a list or an object to text attributes the wake to a task. Null and empty come first: drawn as
often as all the others."""

UNPARSEABLE_PAYLOADS: Final = (
    '{"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent"',
    '[{"task_id": "T-100", "actor_type": "agent"}]',
    '{"task_id": null, "actor_type": "agent"',
    '{"workspace_id": "acme"',
    "null",
    "42",
    '"agent"',
    "{'task_id': 'T-100', 'actor_type': 'agent'}",
)
"""Payload texts that are no JSON object, several of them mentioning actor type agent and a task:
a count that reads stored payloads leniently (a regular expression) counts them; one that fails
on them turns every later read into a failed one. A bare NaN is not among them: decoders differ
on it, an open question (OF-9) that one scenario judges under both readings."""

JUDGED_APART: Final = ('{"task_id": "T-100", "actor_type": "agent", "weight": NaN}',)
"""Payloads the models never draw, since decoders differ on them and the models read by one
reading: OF-9's bare NaN, judged under both readings by its own scenario."""

TASK_ASSIGNED: Final = "task_assigned"


def agent_payload(task_id: Any, acting: str, *, drop_task: bool = False) -> dict[str, Any]:
    fields: dict[str, Any] = {"task_id": task_id, "workspace_id": OFFICE_WORKSPACE}
    if drop_task:
        del fields["task_id"]
    return {**fields, "actor_type": "agent", "actor_id": acting}


@cache
def odd_payloads() -> st.SearchStrategy[tuple[str, dict[str, Any] | str]]:
    """A raw wake's reason and payload (an object, or a text that is none): in scope and
    attributed, stamped with another actor type, of another reason, naming no task, or not
    an object at all, each as often. The first task, whose window the schedules fill, comes
    twice as often as each other: a lenient reading shows only on a wake the gate would
    refuse. A task id of spaces is drawn beside the tasks."""
    tasks = st.sampled_from([OFFICE_TASKS[0], *OFFICE_TASKS, BLANK_TASK_ID])
    acting = st.sampled_from(ACTING_AGENTS)
    in_scope = st.builds(agent_payload, tasks, acting)
    other_actor = st.builds(
        lambda task, actor, who: {**agent_payload(task, who), "actor_type": actor},
        tasks,
        st.sampled_from(NOT_AGENT_ACTOR_TYPES),
        acting,
    )
    no_actor = tasks.map(lambda task: {"task_id": task, "workspace_id": OFFICE_WORKSPACE})
    unattributed = st.one_of(
        st.builds(agent_payload, st.sampled_from(UNATTRIBUTED_TASK_IDS[:2]), acting),
        st.builds(agent_payload, st.sampled_from(UNATTRIBUTED_TASK_IDS[2:]), acting),
        st.builds(lambda who: agent_payload(None, who, drop_task=True), acting),
    )
    assigned: list[st.SearchStrategy[dict[str, Any] | str]] = [
        in_scope,
        other_actor,
        no_actor,
        unattributed,
        st.sampled_from(UNPARSEABLE_PAYLOADS),
    ]
    return st.one_of(
        *(st.tuples(st.just(TASK_ASSIGNED), payloads) for payloads in assigned),
        st.tuples(st.sampled_from(OTHER_REASONS), in_scope),
    )


# --------------------------------------------------------------------------
# Work requests: grant names, principals, environments and campaigns a wrong match would mix
# --------------------------------------------------------------------------

GRANT_NAMES: Final = (
    "shell",
    "sh",
    "hell",
    "shell-admin",
    "browser",
    "browse",
    "compiler",
    "gpu",
    "gpu-0",
    "camera",
    "cam",
    "microphone",
    "mic",
)
"""Tool and device grants, from one pool (so that a check pooling tools with devices, a device
"camera" letting a tool "camera" through, shows), whose names contain one another: "sh" is a
prefix of "shell", "hell" a suffix, "shell" a prefix of "shell-admin", "mic" of "microphone".
A grant compared by substring (a name looked up in the held names joined into one text), by
prefix, or as a namespace that covers longer names, lets a child have what its originator
lacks. The Gherkin's grant names are drawn from here too
(tests/features/test_workreq_hostile_data.py)."""

GRANT_NAMES_JUDGED_APART: Final = ("Shell", "GPU")
"""Held names written in other case, which the machine never draws: whether "Shell" is the
grant "shell" is open (WR-25), and the machine predicts by the readings it can follow. The
Gherkin judges them by the kit's reading, and an implementation that folds names diverges."""

ENVIRONMENT_MEMBERS: Final = {
    "studio": ("alice", "bob", "carol"),
    "studio-annex": ("carol", "dave", "bobby"),
}
"""Two environments whose ids are a prefix of one another ("studio" of "studio-annex"), and
"annex" a suffix of the second, the Gherkin Background's own environment: a listing filtered
by prefix, suffix or substring mixes them. Carol belongs to both, so a listing that answers
every environment its principal belongs to, or checks membership of any environment, shows
her the wrong one's requests; "bob" is a prefix of "bobby", who is in the other one."""

LISTED_ENVIRONMENTS: Final = (*ENVIRONMENT_MEMBERS, "studio-", "nowhere", "Studio", "studio ")
"""What a principal asks to list: each environment, one that does not exist but is a prefix of
one that does, one that is nothing like any, and two that a case-insensitive or space-padding
collation (MySQL's and MariaDB's defaults) takes for "studio"."""

PRINCIPALS: Final = ("alice", "bob", "carol", "dave", "bobby", "al", "Alice")
"""Everyone the machine acts as: members of one environment, of both, "al", a prefix of
"alice" who belongs to none, and "Alice", whom a case-insensitive collation takes for alice."""

CAMPAIGN_ENVIRONMENTS: Final = {
    "camp": "studio",
    "camp-2": "studio",
    "annex-camp": "studio-annex",
    "Camp": "studio",
}
"""Four campaigns: two in one environment whose ids are a prefix of one another, one whose id
ends with the first's ("annex-camp"), and "Camp", camp to a case-insensitive collation, whose
budget nobody draws on: a budget summed over campaign ids matched by prefix or suffix, or over
an environment, or looked up by a folded id, takes another campaign's slices for its own."""

IDLE_CAMPAIGN_BUDGET: Final = 40
"""The budget of "Camp", which no session draws on: any read of it that moves is another's."""


def granting(tools: set[str], devices: set[str]) -> Permissions:
    return Permissions(tools=frozenset(tools), devices=frozenset(devices))


ROOT_SESSIONS: Final = {
    "root-alice": ("camp", "alice", granting({"shell", "browser"}, {"gpu", "camera"})),
    "root-bob": ("camp-2", "bob", granting({"shell-admin"}, set())),
    "root-carol": ("annex-camp", "carol", granting({"sh", "compiler"}, {"microphone"})),
}
"""Each root holds a name some of whose neighbours it lacks: alice "shell" but not "sh" or
"hell", bob "shell-admin" but not "shell", carol "sh" but not "shell", "microphone" but not
"mic". Each in its own campaign, carol's in the environment she shares with nobody else's root."""


def neighbours(names: frozenset[str]) -> tuple[str, ...]:
    """The pool's names that contain one of `names` or are contained in one, other than them:
    the grants a substring, prefix or suffix match confuses with those held."""
    return tuple(
        other
        for other in GRANT_NAMES
        if other not in names and any(other in name or name in other for name in names)
    )


def grants(names: tuple[str, ...] | frozenset[str]) -> st.SearchStrategy[frozenset[str]]:
    """Any subset of `names`."""
    if not names:
        return st.just(frozenset())
    return st.frozensets(st.sampled_from(sorted(names)))


def narrowings(origin: Permissions) -> st.SearchStrategy[Permissions]:
    return st.builds(Permissions, tools=grants(origin.tools), devices=grants(origin.devices))


def grant_masks() -> st.SearchStrategy[Permissions]:
    """Any set of the pool's names as tools and as devices: what an originator's set is
    narrowed to by `narrowed`, drawn before the originator is known."""
    return st.builds(Permissions, tools=grants(GRANT_NAMES), devices=grants(GRANT_NAMES))


def narrowed(origin: Permissions, mask: Permissions) -> Permissions:
    return Permissions(tools=origin.tools & mask.tools, devices=origin.devices & mask.devices)


def extra_grant(origin: Permissions) -> st.SearchStrategy[frozenset[str]]:
    """One grant the originator lacks, as a kind: mostly a neighbour of one it holds (see
    `neighbours`), else any name of the pool (which it may hold as the other kind)."""
    close = neighbours(origin.tools | origin.devices)
    anywhere = st.sampled_from(GRANT_NAMES)
    names = st.one_of(st.sampled_from(close), anywhere) if close else anywhere
    return st.frozensets(names, min_size=1, max_size=1)


def widenings(origin: Permissions) -> st.SearchStrategy[Permissions]:
    """A narrowing of `origin` plus one grant, tool or device (see `extra_grant`)."""
    extra = extra_grant(origin)
    return st.one_of(
        st.builds(
            Permissions,
            tools=st.builds(frozenset.union, grants(origin.tools), extra),
            devices=grants(origin.devices),
        ),
        st.builds(
            Permissions,
            tools=grants(origin.tools),
            devices=st.builds(frozenset.union, grants(origin.devices), extra),
        ),
    )


@cache
def permission_sets(origin: Permissions, root: Permissions) -> st.SearchStrategy[Permissions]:
    """Mostly a narrowing of the originator's set; sometimes one grant wider, or what
    the lineage's root holds (which a narrowed originator may have dropped).

    Built once per pair, as `assignees` and `claimants` are per argument: a strategy made anew
    at every draw cost a short search of the work-request machine a quarter of its time (a
    thorough search meets some twenty pairs, each a thousand times). The parts stay uncached:
    `one_of` keeps a branch once by identity, so a cached narrowing listed twice for weight
    would count once."""
    return st.one_of(narrowings(origin), narrowings(origin), widenings(origin), narrowings(root))


@cache
def assignees(environment: str) -> st.SearchStrategy[str | None]:
    """Mostly nobody or a member of the originator's environment, sometimes anyone at all (a
    member of the other environment only, or of none)."""
    members = st.sampled_from(ENVIRONMENT_MEMBERS[environment])
    return weighted((2, st.none()), (2, members), (1, st.sampled_from(PRINCIPALS)))


@cache
def claimants(assignee: str | None, environment: str) -> st.SearchStrategy[str]:
    """Mostly someone entitled to claim the request, sometimes anyone at all."""
    members = ENVIRONMENT_MEMBERS[environment]
    entitled = st.just(assignee) if assignee is not None else st.sampled_from(members)
    return weighted((2, entitled), (1, st.sampled_from(PRINCIPALS)))
