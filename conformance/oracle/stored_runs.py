"""What a stored run may become between two reads, and the clause each other change breaks.

A stored row decides later counts: its request instant says when it leaves the window, its
payload (and reason) which task's allowance it counts toward, its dedup key which redelivery it
absorbs. So every later read of a row must show what the spec lets it be. The spec tolerates
one change: a wake merged into a queued run may overwrite that run's payload (and so relabel
what it counts toward). What the count never reads is not compared: a rewritten payload that
counts as before, the agent, the merge count (a refusal's merge is judged where refusals are),
the status (the harness's to set). These checks only ever break: a row kept as it was proves
no clause, so they leave no evidence of one held.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from conformance.driver import Run
from conformance.oracle.office_shapes import counts_as_agent_run, parse_payload
from conformance.spec.clause_check import ClauseViolation, violated

KEPT_STEP = (
    "every run stored before {that} still reads as it did, but for the payload of a run "
    "{it} merged into"
)
"""The Gherkin step that makes this check, for one wake or a batch."""

RESTART_KEPT_STEP = "every run stored before the restart still reads as it did"
"""The Gherkin step that makes the check across a restart."""
DELETION_KEPT_STEP = "every other run stored before the deletion still reads as it did"
"""The Gherkin step that makes it across a deletion, for every row but the one deleted."""

STORED_DIGITS = range(7)
"""The fractional digits of a second a store may keep (the protocol allows 0 to 6)."""


@dataclass(frozen=True)
class Change:
    """One change to a stored row that a clause forbids."""

    cites: tuple[str, ...]
    account: str


def counted_toward(run: Run) -> str | None:
    """The task whose allowance a stored row counts toward, read as the spec reads it."""
    task_id = (parse_payload(run.payload) or {}).get("task_id")
    if isinstance(task_id, str) and task_id and counts_as_agent_run(run, task_id):
        return task_id
    return None


def stored_at(instant: datetime, stored: datetime) -> bool:
    """Whether `stored` is `instant` as a store keeping some number of fractional digits keeps
    it (truncated or rounded to that precision)."""
    for digits in STORED_DIGITS:
        unit = 10 ** (6 - digits)
        if stored.microsecond % unit == 0 and abs(stored - instant) < timedelta(microseconds=unit):
            return True
    return False


def forbidden_changes(
    before: Run, after: Run, *, merged_into: bool, reloaded: bool = False
) -> list[Change]:
    """What changed from `before` to `after` (one row, read twice) that no clause lets change.
    `merged_into`: a wake was reported merged into this row, which may take its payload;
    `reloaded`: read again after a restart, from a store that may keep fewer digits of a second
    than the process answered from before."""
    was, now = counted_toward(before), counted_toward(after)
    changes: list[Change] = []
    if was != now and not merged_into:
        cites = (
            *(("AC-OFFICE-ASSIGN-RATE-001.4/admitted-consume",) if now else ()),
            *(("AC-OFFICE-ASSIGN-RATE-001.4/frees-after-window",) if was else ()),
        )
        changes.append(
            Change(cites, f"counted toward {was!r}, now toward {now!r}: {after.payload}")
        )
    moved = after.requested_at != before.requested_at
    if reloaded:
        moved = not stored_at(before.requested_at, after.requested_at)
    if (was or now) and moved:
        changes.append(
            Change(
                ("AC-OFFICE-ASSIGN-RATE-001.4/frees-after-window",),
                f"requested at {before.requested_at.isoformat()}, now at "
                f"{after.requested_at.isoformat()}: its place would free at another time",
            )
        )
    if (was or now) and before.dedup_key is not None and after.dedup_key != before.dedup_key:
        changes.append(
            Change(
                ("AC-OFFICE-ASSIGN-RATE-002.5/keyed-once",),
                f"keyed {before.dedup_key!r}, now {after.dedup_key!r}: a redelivery of its "
                "occurrence would no longer be found",
            )
        )
    return changes


def changes_in_store(
    before: list[Run], after: list[Run], merged_into: set[str], *, reloaded: bool = False
) -> list[tuple[str, Change]]:
    """Every forbidden change between two reads of the store, by run id (a run gone is judged
    elsewhere: what may remove one is a question of its own)."""
    now = {run.run_id: run for run in after}
    return [
        (run.run_id, change)
        for run in before
        if run.run_id in now
        for change in forbidden_changes(
            run, now[run.run_id], merged_into=run.run_id in merged_into, reloaded=reloaded
        )
    ]


def expect_kept(
    before: list[Run], after: list[Run], merged_into: set[str], also: tuple[str, ...] = ()
) -> None:
    """Every run of `before` reads in `after` as the spec lets it; `also`: the clauses the
    action between the two reads adds to why."""
    changes = changes_in_store(before, after, merged_into)
    if changes:
        raise broken_store(changes, also)


def expect_all_kept(
    before: list[Run],
    after: list[Run],
    across: Literal["restart", "deletion"],
    window_opens: datetime,
) -> None:
    """Across a restart, or a deletion of another run (`before` without it): every run reads
    as it did, and none that still counts in the window (which opened at `window_opens`) is
    gone; a run the window has passed may go, since it counts for nothing. Like the other
    stored-run checks, this one only ever breaks."""
    now = {run.run_id for run in after}
    lost = [
        (
            run.run_id,
            Change(
                ("AC-OFFICE-ASSIGN-RATE-001.4/frees-after-window",), "is gone while it still counts"
            ),
        )
        for run in before
        if counted_toward(run) and run.requested_at > window_opens and run.run_id not in now
    ]
    reloaded = across == "restart"
    changes = lost + changes_in_store(before, after, set(), reloaded=reloaded)
    if changes:
        raise broken_store(
            changes,
            (
                "AC-OFFICE-ASSIGN-RATE-002.4/restart"
                if reloaded
                else "AC-OFFICE-ASSIGN-RATE-002.4/deleted-row",
            ),
        )


def broken_store(changes: list[tuple[str, Change]], also: tuple[str, ...]) -> ClauseViolation:
    return violated(
        tuple(dict.fromkeys((*also, *(c for _, change in changes for c in change.cites)))),
        "stored runs changed: "
        + "; ".join(f"{run_id} {change.account}" for run_id, change in changes),
    )
