"""The work-request tables: environments, campaigns, session lineage and requests.

Sets and lists (permission grants, acceptance checks) are JSON columns, which
SQLite and PostgreSQL both serve. Budget amounts are integers. A request's
remaining budget is never stored: it is derived from its columns
(`remaining_expression`), so that no two columns can disagree.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, TypeAlias, cast

from sqlalchemy import JSON, ColumnElement, ForeignKey, Integer, Row, String, Table, func
from sqlalchemy.orm import Mapped, mapped_column

from conformance.reference.db import Base, UTCDateTime

ID_LENGTH = 200


class State(StrEnum):
    """A request's stored state. An expired in_progress lease is reported as open."""

    OPEN = "open"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


class Environment(Base):
    __tablename__ = "workreq_environments"

    environment_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)


class EnvironmentMember(Base):
    __tablename__ = "workreq_members"

    environment_id: Mapped[str] = mapped_column(
        ForeignKey("workreq_environments.environment_id"), primary_key=True
    )
    principal: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)


class Campaign(Base):
    """A budget. `spent` is all usage charged anywhere in the campaign's lineage."""

    __tablename__ = "workreq_campaigns"

    campaign_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    environment_id: Mapped[str] = mapped_column(ForeignKey("workreq_environments.environment_id"))
    total: Mapped[int] = mapped_column(Integer)
    available: Mapped[int] = mapped_column(Integer)
    spent: Mapped[int] = mapped_column(Integer, default=0)


class DelegationSession(Base):
    """A session in a delegation lineage.

    A root session (depth 0, no parent) draws on its campaign; a child session
    draws on the slice of the request it was created for (`request_id`). That
    column carries no foreign key because requests already point at sessions.
    `children_count` is bumped by a conditional UPDATE so that the count cap
    holds under concurrent delegations.
    """

    __tablename__ = "workreq_sessions"

    session_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    campaign_id: Mapped[str] = mapped_column(ForeignKey("workreq_campaigns.campaign_id"))
    principal: Mapped[str] = mapped_column(String(ID_LENGTH))
    parent_session_id: Mapped[str | None] = mapped_column(
        ForeignKey("workreq_sessions.session_id"), default=None
    )
    depth: Mapped[int] = mapped_column(Integer)
    tools: Mapped[list[str]] = mapped_column(JSON)
    devices: Mapped[list[str]] = mapped_column(JSON)
    request_id: Mapped[str | None] = mapped_column(String(ID_LENGTH), default=None)
    children_count: Mapped[int] = mapped_column(Integer, default=0)


class WorkRequestRecord(Base):
    """One delegation work request with its lease and budget columns.

    `seq` gives creation order. `carved` is what this request's slice has
    handed to its children and not had back; `returned` is what went back to
    the originator on completion (None until then, so it is returned once).
    """

    __tablename__ = "workreq_requests"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    request_id: Mapped[str] = mapped_column(String(ID_LENGTH), unique=True)
    kind: Mapped[str] = mapped_column(String(20))
    environment_id: Mapped[str] = mapped_column(ForeignKey("workreq_environments.environment_id"))
    campaign_id: Mapped[str] = mapped_column(ForeignKey("workreq_campaigns.campaign_id"))
    originating_session_id: Mapped[str] = mapped_column(ForeignKey("workreq_sessions.session_id"))
    parent_request_id: Mapped[str | None] = mapped_column(
        ForeignKey("workreq_requests.request_id"), default=None
    )
    child_session_id: Mapped[str] = mapped_column(ForeignKey("workreq_sessions.session_id"))
    deliverable: Mapped[str] = mapped_column(String)
    acceptance_checks: Mapped[list[str]] = mapped_column(JSON)
    budget_slice: Mapped[int] = mapped_column(Integer)
    spent: Mapped[int] = mapped_column(Integer, default=0)
    carved: Mapped[int] = mapped_column(Integer, default=0)
    returned: Mapped[int | None] = mapped_column(Integer, default=None)
    tools: Mapped[list[str]] = mapped_column(JSON)
    devices: Mapped[list[str]] = mapped_column(JSON)
    assignee: Mapped[str | None] = mapped_column(String(ID_LENGTH), default=None)
    lease_holder: Mapped[str | None] = mapped_column(String(ID_LENGTH), default=None)
    lease_generation: Mapped[int] = mapped_column(Integer, default=0)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    lease_closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    state: Mapped[str] = mapped_column(String(20))
    result_ref: Mapped[str | None] = mapped_column(String, default=None)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)

    @property
    def remaining(self) -> int:
        return self.budget_slice - self.spent - self.carved - (self.returned or 0)


def remaining_expression() -> ColumnElement[int]:
    """`WorkRequestRecord.remaining` in SQL, for conditional UPDATEs and sums.

    Written on the table's columns, so that Core statements and ORM ones can both use it.
    """
    columns = REQUESTS.c
    return (
        columns.budget_slice - columns.spent - columns.carved - func.coalesce(columns.returned, 0)
    )


REQUESTS = cast(Table, WorkRequestRecord.__table__)
CAMPAIGNS = cast(Table, Campaign.__table__)
MEMBERS = cast(Table, EnvironmentMember.__table__)
"""The tables themselves, for the statements built once on the hot paths (Core, no ORM)."""

StoredRequest: TypeAlias = WorkRequestRecord | Row[Any]
"""A request as read: a mapped record, or a Core row of its table, whose columns bear the
attributes' names (the read that observers repeat after every step returns rows)."""
