"""The allowance count: a task's agent-initiated assignment runs in the rolling window.

It is read for every in-scope wake, so it is the pipeline's hot path. The
statement is declared once in SQLAlchemy Core and compiled once per dialect;
each read runs the compiled text on the DBAPI connection of the pipeline's
own session, inside its transaction. Through the ORM the same read cost
10-20 times what the database took to answer it (`bench/run.py --only gate`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import Select, bindparam, func, select
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Session
from sqlalchemy.types import TypeEngine

from conformance.reference.db import UTCDateTime, naive_utc
from conformance.reference.office.constants import AGENT_ACTOR, ASSIGNMENT_WINDOW, TASK_ASSIGNED
from conformance.reference.office.models import Run


class CountReadError(Exception):
    """The allowance count could not be read."""


ALLOWANCE_COUNT: Final = (
    select(func.count())
    .select_from(Run)
    .where(
        Run.task_key == bindparam("task_id"),
        Run.reason == TASK_ASSIGNED,
        Run.actor_type == AGENT_ACTOR,
        Run.requested_at > bindparam("window_start"),
        Run.requested_at <= bindparam("window_end"),
    )
)
"""Runs of the task requested in (now - W, now], whatever their status."""


WINDOW_PARAMETERS: Final = ("task_id", "window_start", "window_end")


def allowance_count(task_id: str, now: datetime) -> Select[int]:
    """The count as an ordinary statement, for checks and for anything off the hot path."""
    window = (task_id, now - ASSIGNMENT_WINDOW, now)
    return ALLOWANCE_COUNT.params(dict(zip(WINDOW_PARAMETERS, window, strict=True)))


Processor = Callable[[Any], Any]
Parameters = list[Any] | dict[str, Any]


def _unchanged(value: Any) -> Any:
    return value


def _processor(type_: TypeEngine[Any], dialect: Dialect) -> Processor:
    return type_.dialect_impl(dialect).bind_processor(dialect) or _unchanged


_ISO_MICROSECONDS: Final = operator.methodcaller("isoformat", " ", "microseconds")
_PROBE_INSTANTS: Final = (
    datetime(1, 1, 1),
    datetime(2026, 3, 1, 12, 0),
    datetime(2026, 3, 1, 12, 0, 0, 1),
    datetime(9999, 12, 31, 23, 59, 59, 999999),
)


def _instant_processor(dialect: Dialect) -> Processor:
    """How an instant is bound: SQLAlchemy's own processor, or the C-level ISO format when
    that gives the very same text for every probe (SQLite's default storage format), since
    SQLAlchemy's formatting took longer than the count itself."""
    processor = _processor(UTCDateTime.impl, dialect)
    probes_agree = all(
        processor(instant) == _ISO_MICROSECONDS(instant) for instant in _PROBE_INSTANTS
    )
    return _ISO_MICROSECONDS if probes_agree else processor


@dataclass(frozen=True)
class CompiledCount:
    """The count compiled for one dialect: its text, and its parameters ready to fill in.

    `template` holds the statement's constant parameters already bound, as a
    list for drivers with positional placeholders (sqlite3) or a dict for
    named ones (psycopg); `slots` says where the task and the window's two
    ends go. The decision instant is turned to naive UTC once, for both ends.
    """

    sql: str
    template: Parameters
    slots: tuple[int | str, int | str, int | str]
    process_task: Processor
    process_instant: Processor
    """Binds a naive UTC instant the way the `UTCDateTime` column stores it."""

    @classmethod
    def for_dialect(cls, dialect: Dialect) -> CompiledCount:
        compiled = ALLOWANCE_COUNT.compile(dialect=dialect)
        named = {
            name: _processor(bind.type, dialect)(bind.value)
            for bind, name in compiled.bind_names.items()
        }
        if compiled.positiontup is None:
            template: Parameters = named
            slot_of: Callable[[str], int | str] = str
        else:
            order = list(compiled.positiontup)
            template = [named[name] for name in order]
            slot_of = order.index
        task, start, end = WINDOW_PARAMETERS
        return cls(
            sql=str(compiled),
            template=template,
            slots=(slot_of(task), slot_of(start), slot_of(end)),
            process_task=_processor(Run.__table__.c.task_key.type, dialect),
            process_instant=_instant_processor(dialect),
        )

    def parameters(self, task_id: str, now: datetime) -> tuple[Any, ...] | dict[str, Any]:
        end = naive_utc(now)
        task_slot, start_slot, end_slot = self.slots
        values = self.template.copy()
        values[task_slot] = self.process_task(task_id)  # type: ignore[index]
        values[start_slot] = self.process_instant(end - ASSIGNMENT_WINDOW)  # type: ignore[index]
        values[end_slot] = self.process_instant(end)  # type: ignore[index]
        return values if isinstance(values, dict) else tuple(values)


class AllowanceCounter:
    """Reads the count in the caller's transaction; driver errors become `CountReadError`."""

    def __init__(self) -> None:
        self._compiled: dict[str, CompiledCount] = {}

    def read(self, session: Session, task_id: str, now: datetime) -> int:
        connection = session.connection()
        dialect = connection.dialect
        compiled = self._compiled_for(dialect)
        cursor = connection.connection.cursor()
        try:
            cursor.execute(compiled.sql, compiled.parameters(task_id, now))
            row = cursor.fetchone()
        except dialect.loaded_dbapi.Error as error:
            raise CountReadError(f"{type(error).__name__}: {error}") from error
        finally:
            cursor.close()
        if row is None:
            raise CountReadError("the count returned no row")
        return int(row[0])

    def _compiled_for(self, dialect: Dialect) -> CompiledCount:
        compiled = self._compiled.get(dialect.name)
        if compiled is None:
            compiled = self._compiled[dialect.name] = CompiledCount.for_dialect(dialect)
        return compiled
