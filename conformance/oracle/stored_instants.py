"""Instants as an implementation may have stored them.

The protocol lets an implementation keep and report instants with 0 to 6 fractional digits, and
the specs speak of persisted instants: a check that compares an instant the implementation
derived from the clock (an expiry one lease duration from now, say) holds it to any of those
precisions, never to the microseconds the harness sent.
"""

from __future__ import annotations

from datetime import datetime


def as_stored(instant: datetime) -> set[datetime]:
    """`instant` cut to each precision the protocol allows, from whole seconds to microseconds."""
    return {
        instant.replace(microsecond=instant.microsecond - instant.microsecond % 10**cut)
        for cut in range(7)
    }
