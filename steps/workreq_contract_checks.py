"""Work-request Then steps on grants, the data contract's fields and identities, listings,
and what survives a restart or a crash."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from pytest_bdd import parsers, then

from conformance.driver import (
    DriverError,
    Lease,
    RequestState,
    WorkRequest,
)
from conformance.oracle.grants import within
from conformance.spec.clause_check import (
    expect,
    port_requires,
    scenario_requires,
    scenario_value,
    violated,
)
from conformance.steps.workreq_actions import parse_grants
from conformance.steps.workreq_checks import (
    request,
)
from conformance.steps.workreq_lease_checks import holds_newer, state_kind
from conformance.steps.workreq_world import (
    Observation,
    WorkRequestWorld,
)

# --------------------------------------------------------------------------
# Permissions, contract fields, identity
# --------------------------------------------------------------------------


@then(parsers.re(r'"(?P<name>[^"]+)" grants (?P<grants>.+)'))
def request_grants(workreq_world: WorkRequestWorld, name: str, grants: str) -> None:
    observed = request(workreq_world, name).permissions
    expected = parse_grants(grants)
    expect(
        observed == expected,
        ("AC-ARMONIA-WORKREQ-001.10/contract-fields", "AC-ARMONIA-WORKREQ-001.2/no-wider-grant"),
        f"expected {name!r} to carry the permission set it was delegated with, {expected}, "
        f"observed {observed}",
    )


@then(
    parsers.re(
        r'no request of "(?P<environment>[^"]+)" grants anything its originating session lacks'
    )
)
def no_request_widens(workreq_world: WorkRequestWorld, environment: str) -> None:
    for name, made in workreq_world.requests.items():
        if made.environment_id != environment:
            continue
        granted = request(workreq_world, name).permissions
        held = workreq_world.session_permissions.get(made.originating_session_id)
        expect(
            held is not None and within(granted, held),
            "AC-ARMONIA-WORKREQ-001.9/no-authority-created",
            f"{name!r} grants {granted}, its originating session holds {held}",
        )


def render(value: object) -> str:
    """A contract field as the feature writes it."""
    if value is None:
        return "<none>"
    if isinstance(value, frozenset):
        return ", ".join(sorted(value))
    if isinstance(value, list):
        return "; ".join(str(item) for item in value)
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, RequestState):
        return value.value
    return str(value)


CONTRACT_FIELDS: dict[str, Callable[[WorkRequest], object]] = {
    "request id": lambda r: r.request_id,
    "campaign": lambda r: r.campaign_id,
    "originating session": lambda r: r.originating_session_id,
    "deliverable": lambda r: r.deliverable,
    "acceptance checks": lambda r: r.acceptance_checks,
    "budget slice": lambda r: r.budget_slice,
    "tool grants": lambda r: r.permissions.tools,
    "device grants": lambda r: r.permissions.devices,
    "assignee": lambda r: r.assignee,
    "lease holder": lambda r: r.lease.holder,
    "lease generation": lambda r: r.lease.generation,
    "lease expiry": lambda r: r.lease.expires_at,
    "state": lambda r: r.state,
    "result reference": lambda r: r.result_ref,
}
"""The data contract's fields, and where a WorkRequest carries each."""


def field_matches(
    world: WorkRequestWorld, current: WorkRequest, expected: str, value: object
) -> bool:
    """`<set>` present and non-empty, `<none>` absent, `<any>` anything, `<as granted>` the
    generation the holder's claim was granted; a list (the acceptance checks) in any order, as
    the machine compares it, since the contract gives them none; otherwise the rendered value."""
    if expected == "<any>":
        return True
    if expected == "<set>":
        return value is not None and render(value) != ""
    if expected == "<as granted>":
        holder = current.lease.holder
        name = world.name_of(current.request_id)
        return holder is not None and value == world.granted(name, holder).generation
    if isinstance(value, list):
        return sorted(map(str, value)) == sorted(part.strip() for part in expected.split(";"))
    return render(value) == expected


@then(parsers.re(r'"(?P<name>[^"]+)" reports every contract field as:'))
def reports_contract_fields(
    workreq_world: WorkRequestWorld, name: str, datatable: list[list[str]]
) -> None:
    current = request(workreq_world, name)
    expected = {field_name.strip(): value.strip() for field_name, value in datatable[1:]}
    scenario_requires(
        set(expected) == set(CONTRACT_FIELDS),
        f"the table must name every contract field: {sorted(CONTRACT_FIELDS)}",
    )
    mismatches = {
        field_name: (wanted, render(CONTRACT_FIELDS[field_name](current)))
        for field_name, wanted in expected.items()
        if not field_matches(workreq_world, current, wanted, CONTRACT_FIELDS[field_name](current))
    }
    expect(
        not mismatches,
        "AC-ARMONIA-WORKREQ-001.10/contract-fields",
        f"expected vs observed contract fields of {name!r}: {mismatches}",
    )


@then(
    parsers.re(
        r'"(?P<first>[^"]+)" and "(?P<second>[^"]+)" have distinct ids'
        r" and distinct new child sessions"
    )
)
def distinct_ids_and_sessions(workreq_world: WorkRequestWorld, first: str, second: str) -> None:
    one, two = request(workreq_world, first), request(workreq_world, second)
    expect(
        one.request_id != two.request_id,
        "AC-ARMONIA-WORKREQ-001.10/contract-fields",
        f"two requests share the id {one.request_id!r}",
    )
    sessions = {one.child_session_id, two.child_session_id, one.originating_session_id}
    port_requires(
        len(sessions) == 3,
        "each request names a child session of its own, new and not its originator: "
        f"{one.child_session_id!r}, {two.child_session_id!r}",
    )


# --------------------------------------------------------------------------
# Listings
# --------------------------------------------------------------------------


def listed(world: WorkRequestWorld, environment: str, principal: str) -> dict[str, str]:
    try:
        requests = world.driver.list_requests(environment, principal)
    except DriverError as error:
        raise violated(
            "AC-ARMONIA-WORKREQ-001.5/members-list",
            f"{principal!r}'s listing of {environment!r} was refused: {error}",
        ) from error
    return {world.name_of(r.request_id): r.state.value for r in requests}


def check_listing(
    world: WorkRequestWorld, environment: str, principal: str, expected: dict[str, str]
) -> None:
    """Every open and in-progress request listed and no other environment's (the clause);
    nothing else, completed ones included (WR-17)."""
    observed = listed(world, environment, principal)
    missing = sorted(name for name in expected if name not in observed)
    expect(
        not missing,
        "AC-ARMONIA-WORKREQ-001.5/members-list",
        f"expected {principal!r} to list {expected} (in any order), observed {observed}",
    )
    for name, state in expected.items():
        expect(
            observed.get(name, state) == state,
            world.state_cite(name, state),
            f"{principal!r}'s listing has {name!r} {observed.get(name)}, expected {state}",
            observed=state_kind(str(observed.get(name))),
        )
    extra = sorted(set(observed) - set(expected))
    leaked = [name for name in extra if _leaked_to(world, name, environment, principal)]
    expect(
        not leaked,
        "AC-ARMONIA-WORKREQ-001.5/non-members-cannot",
        f"{principal!r}'s listing of {environment!r} holds {leaked}, requests of an environment "
        f"{principal!r} is not a member of",
    )
    elsewhere = [n for n in extra if n not in leaked and _of_another(world, n, environment)]
    expect(
        not elsewhere,
        "AC-ARMONIA-WORKREQ-001.5/members-list",
        f"{principal!r}'s listing of {environment!r} holds {elsewhere}, requests of another "
        "environment (one the principal belongs to as well): not this environment's list",
    )
    completed = all(world.completions.get(name) is not None for name in extra)
    expect(
        not extra,
        "WR-17",
        f"{principal!r}'s listing holds {extra} besides the open and in-progress requests",
        observed="listed" if completed else "other-state",
    )


def _of_another(world: WorkRequestWorld, name: str, environment: str) -> bool:
    made = world.requests.get(name)
    return made is not None and made.environment_id != environment


def _leaked_to(world: WorkRequestWorld, name: str, environment: str, principal: str) -> bool:
    """Whether `name` was delegated in another environment, one `principal` is not a member of."""
    made = world.requests.get(name)
    if made is None or made.environment_id == environment:
        return False
    return principal not in world.environments.get(made.environment_id, [])


@then(parsers.re(r'"(?P<principal>[^"]+)" lists in "(?P<environment>[^"]+)":'))
def lists_in_environment(
    workreq_world: WorkRequestWorld, principal: str, environment: str, datatable: list[list[str]]
) -> None:
    expected = {name: state.replace(" ", "_") for name, state in datatable[1:]}
    check_listing(workreq_world, environment, principal, expected)


@then(parsers.re(r'"(?P<principal>[^"]+)" lists no requests in "(?P<environment>[^"]+)"'))
def lists_nothing(workreq_world: WorkRequestWorld, principal: str, environment: str) -> None:
    check_listing(workreq_world, environment, principal, {})


# --------------------------------------------------------------------------
# Restarts and crashes
# --------------------------------------------------------------------------


@then("every request, listing, budget and session reads as it did before the restart")
def reads_as_before_restart(workreq_world: WorkRequestWorld) -> None:
    noted: Observation = scenario_value(
        workreq_world.before_restart, "the implementation did not restart in this scenario"
    )
    after = workreq_world.observe()
    expect(
        after == noted,
        ("AC-ARMONIA-WORKREQ-001.3/request-survives", "AC-ARMONIA-WORKREQ-001.3/lease-survives"),
        lambda: (
            "expected everything to read as before the restart, observed:\n"
            + noted.differences(after)
        ),
    )


AS_DELEGATED = (
    "request_id",
    "kind",
    "environment_id",
    "campaign_id",
    "originating_session_id",
    "child_session_id",
    "deliverable",
    "acceptance_checks",
    "budget_slice",
    "permissions",
    "assignee",
)
"""The fields of a request that no claim, heartbeat, usage or publish moves."""


def surviving(world: WorkRequestWorld, name: str) -> WorkRequest:
    """`name` read after a crash: still there, and as it was delegated."""
    try:
        current = request(world, name)
    except DriverError as error:
        raise violated(
            "AC-ARMONIA-WORKREQ-001.3/request-survives",
            f"{name!r} was delegated before the crash; reading it after: {error}",
        ) from error
    made = world.requests[name]
    changed = {
        field: (getattr(made, field), getattr(current, field))
        for field in AS_DELEGATED
        if getattr(made, field) != getattr(current, field)
    }
    expect(
        not changed,
        "AC-ARMONIA-WORKREQ-001.3/request-survives",
        f"{name!r} reads otherwise after the crash than as delegated (before, after): {changed}",
    )
    return current


@then(
    parsers.re(
        r'every one of them is still held by "(?P<holder>[^"]+)" under his lease, or completed '
        r'by "(?P<completer>[^"]+)" under it with his result'
    )
)
def held_or_completed(workreq_world: WorkRequestWorld, holder: str, completer: str) -> None:
    """Holder and generation survive either way; a lease still open keeps its expiry too."""
    scenario_value(workreq_world.batch or None, "no batch of requests was made")
    for name in workreq_world.batch:
        granted = workreq_world.granted(name, holder)
        current = surviving(workreq_world, name)
        completed = current.state is RequestState.COMPLETED
        observed = (current.lease.holder, current.lease.generation, current.lease.expires_at)
        expected = (holder, granted.generation, observed[2] if completed else granted.expires_at)
        expect(
            observed == expected,
            "AC-ARMONIA-WORKREQ-001.3/lease-survives",
            f"{name!r} was held by {holder!r} at generation {granted.generation} until "
            f"{granted.expires_at} before the crash; after it, its lease reads {current.lease}",
        )
        expected_result = f"s3://results/{name.replace(' ', '-')}"
        expect(
            current.state is not RequestState.COMPLETED or current.result_ref == expected_result,
            "AC-ARMONIA-WORKREQ-001.6/records-result",
            f"{name!r} completed with {current.result_ref!r}, not the result {completer!r} "
            f"published ({expected_result!r})",
        )


@then(
    parsers.re(
        r'"(?P<holder>[^"]+)" holds each of them not completed under a newer generation than '
        r'"(?P<other>[^"]+)" held, and was refused each completed one'
    )
)
def holds_each_newer(workreq_world: WorkRequestWorld, holder: str, other: str) -> None:
    claims = scenario_value(workreq_world.late_claims or None, f"{holder!r} claimed none of them")
    for name, outcome in claims.items():
        port_requires(
            not isinstance(outcome, DriverError) or outcome.definite,
            f"{holder!r}'s claim of {name!r} ended indeterminate, outside any batch: {outcome}",
        )
        completed = request(workreq_world, name).state is RequestState.COMPLETED
        if completed:
            expect(
                isinstance(outcome, DriverError),
                "AC-ARMONIA-WORKREQ-001.6/closes-once",
                f"{name!r} is completed, yet {holder!r}'s claim of it was granted {outcome}",
            )
            continue
        expect(
            isinstance(outcome, Lease),
            "AC-ARMONIA-WORKREQ-001.4/claimable-again",
            f"{name!r} was not completed and its lease had run out, yet {holder!r}'s claim of "
            f"it was refused: {outcome}",
        )
        holds_newer(workreq_world, holder, name, other, None)
