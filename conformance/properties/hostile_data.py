"""The data a wrong filter, a lenient reading or a substring match would get wrong, in one place.

The models draw from these pools, and the Gherkin's tables use values from them (a test holds
the features to it), so a scenario and a model can never test with kinder data than each other.
Each pool says which wrong implementation it is there to tell from a right one.
"""

from __future__ import annotations

from typing import Any, Final

from hypothesis import strategies as st

# --------------------------------------------------------------------------
# Office: who acts, which tasks, and the payloads the gate must read exactly
# --------------------------------------------------------------------------

OFFICE_WORKSPACE: Final = "acme"
ACTING_AGENTS: Final = ("ada", "bob")
"""Agents who may assign tasks: they act on mutations, and are assigned as well."""
ASSIGNEES: Final = ("ada", "bob", "cy", "dee")
OFFICE_TASKS: Final = ("T-100", "T-1000", "T-200")
"""T-100 is a prefix of T-1000: a count matching task ids by prefix (or `LIKE`) mixes them."""

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

UNATTRIBUTED_TASK_IDS: Final[tuple[Any, ...]] = (None, "", 100, True, ["T-100"], {"id": "T-100"})
"""task_id values that name no task (absent is drawn besides): a reading that coerces a number,
a list or an object to text attributes the wake to a task."""

UNPARSEABLE_PAYLOADS: Final = (
    '{"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent"',
    '[{"task_id": "T-100", "actor_type": "agent"}]',
    '{"task_id": "T-100", "actor_type": "agent", "weight": NaN}',
    "null",
    "42",
    '"agent"',
    "{'task_id': 'T-100', 'actor_type': 'agent'}",
)
"""Payload texts that are no JSON object, several of them mentioning actor type agent and a task:
a count that reads stored payloads leniently (a regular expression, a JSON function that
accepts NaN) counts them; one that fails on them turns every later read into a failed one."""

TASK_ASSIGNED: Final = "task_assigned"


def agent_payload(task_id: Any, acting: str, *, drop_task: bool = False) -> dict[str, Any]:
    fields: dict[str, Any] = {"task_id": task_id, "workspace_id": OFFICE_WORKSPACE}
    if drop_task:
        del fields["task_id"]
    return {**fields, "actor_type": "agent", "actor_id": acting}


def odd_payloads() -> st.SearchStrategy[tuple[str, dict[str, Any] | str]]:
    """A raw wake's reason and payload (an object, or a text that is none): in scope and
    attributed, stamped with another actor type, of another reason, naming no task, or not
    an object at all."""
    tasks, acting = st.sampled_from(OFFICE_TASKS), st.sampled_from(ACTING_AGENTS)
    in_scope = st.builds(agent_payload, tasks, acting)
    other_actor = st.builds(
        lambda task, actor, who: {**agent_payload(task, who), "actor_type": actor},
        tasks,
        st.sampled_from(NOT_AGENT_ACTOR_TYPES),
        acting,
    )
    no_actor = tasks.map(lambda task: {"task_id": task, "workspace_id": OFFICE_WORKSPACE})
    unattributed = st.one_of(
        st.builds(agent_payload, st.sampled_from(UNATTRIBUTED_TASK_IDS), acting),
        st.builds(lambda who: agent_payload(None, who, drop_task=True), acting),
    )
    assigned = st.one_of(in_scope, other_actor, no_actor, unattributed)
    return st.one_of(
        st.tuples(st.just(TASK_ASSIGNED), assigned),
        st.tuples(st.sampled_from(OTHER_REASONS), in_scope),
        st.tuples(st.just(TASK_ASSIGNED), st.sampled_from(UNPARSEABLE_PAYLOADS)),
    )
