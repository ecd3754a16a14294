"""How a careless comparison joins names: the collations MySQL and MariaDB use by default."""

from __future__ import annotations

from sqlalchemy import ColumnElement, func
from sqlalchemy.orm import InstrumentedAttribute


def folded(column: InstrumentedAttribute[str], value: str) -> ColumnElement[bool]:
    """`column = value` as a case-insensitive collation that pads with spaces compares them:
    "Studio" and "studio " are "studio", "t-100" and "T-100 " are "T-100"."""
    return func.lower(func.rtrim(column)) == value.rstrip(" ").lower()
