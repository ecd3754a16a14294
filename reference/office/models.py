"""The Office tables: workspaces, agents, tasks, runs and office sessions.

A run keeps its payload text verbatim. Two columns are derived from that text
whenever it is written (insert and coalescing merge alike, through
`Run.write_payload`): the task it names and its actor type. They exist so that
the allowance count and the coalescing lookup are index-backed on every
dialect, including for payloads that do not parse.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from conformance.reference.db import Base, UTCDateTime
from conformance.reference.office.classifier import PayloadFacts, read_payload


class Workspace(Base):
    __tablename__ = "office_workspaces"

    id: Mapped[str] = mapped_column(String, primary_key=True)


class Agent(Base):
    __tablename__ = "office_agents"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("office_workspaces.id"))
    can_assign_tasks: Mapped[bool]


class Task(Base):
    __tablename__ = "office_tasks"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("office_workspaces.id"))
    assignee_agent_id: Mapped[str] = mapped_column(String, default="")
    assignment_generation: Mapped[int] = mapped_column(default=0)


class Run(Base):
    __tablename__ = "office_runs"
    __table_args__ = (
        Index("ux_office_runs_dedup_key", "dedup_key", unique=True),
        Index(
            "ix_office_runs_assignment_count", "task_key", "reason", "actor_type", "requested_at"
        ),
        Index(
            "ix_office_runs_coalesce", "agent_id", "reason", "task_key", "status", "requested_at"
        ),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    agent_id: Mapped[str] = mapped_column(ForeignKey("office_agents.id"))
    reason: Mapped[str] = mapped_column(String)
    payload: Mapped[str] = mapped_column(Text)
    dedup_key: Mapped[str | None] = mapped_column(String)
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime)
    status: Mapped[str] = mapped_column(String)
    coalesced_count: Mapped[int] = mapped_column(default=0)
    task_key: Mapped[str] = mapped_column(String, default="")
    """The payload's task_id when it is a non-empty JSON string, else "" (derived)."""
    actor_type: Mapped[str | None] = mapped_column(String)
    """The payload's actor_type when it is a JSON string, else NULL (derived)."""

    def write_payload(self, payload: str, facts: PayloadFacts | None = None) -> None:
        """Store the payload and the columns derived from it, together; `facts` are the
        payload's, already read (a wake's), or None to read them here."""
        known = read_payload(payload) if facts is None else facts
        self.payload = payload
        self.task_key = known.task_key
        self.actor_type = known.actor_type


class OfficeSessionRow(Base):
    __tablename__ = "office_sessions"
    __table_args__ = (Index("ix_office_sessions_agent_task", "agent_id", "task_id"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    agent_id: Mapped[str] = mapped_column(ForeignKey("office_agents.id"))
    task_id: Mapped[str] = mapped_column(ForeignKey("office_tasks.id"))
    state: Mapped[str] = mapped_column(String)
