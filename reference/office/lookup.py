"""Input checks shared by the Office operations: blank identifiers and unknown rows."""

from __future__ import annotations

from typing import TypeVar

from sqlalchemy.orm import Session

from conformance.reference.db import Base
from conformance.reference.errors import InvalidInput, NotFound

M = TypeVar("M", bound=Base)


def require_id(value: str, what: str) -> str:
    """Identifiers are chosen by the caller and must say something."""
    if not value.strip():
        raise InvalidInput(f"{what} id must not be blank")
    return value


def fetch(
    session: Session, model: type[M], key: str | int, what: str, *, for_update: bool = False
) -> M:
    row = session.get(model, key, with_for_update=for_update)
    if row is None:
        raise NotFound(f"unknown {what} {key!r}")
    return row


def ensure_absent(session: Session, model: type[Base], key: str, what: str) -> None:
    if session.get(model, key) is not None:
        raise InvalidInput(f"{what} {key!r} already exists")
