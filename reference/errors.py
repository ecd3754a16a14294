"""Typed errors of the reference. Each is definite: the operation wrote nothing."""

from __future__ import annotations


class DomainError(Exception):
    """Base of every refusal. `code` is a stable machine-readable name."""

    code = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(DomainError):
    code = "invalid_input"


class NotFound(DomainError):
    code = "not_found"


class Forbidden(DomainError):
    code = "forbidden"


class InsufficientBudget(DomainError):
    code = "insufficient_budget"


class PermissionEscalation(DomainError):
    code = "permission_escalation"


class DepthCap(DomainError):
    code = "depth_cap"


class CountCap(DomainError):
    code = "count_cap"


class NotAssignee(DomainError):
    code = "not_assignee"


class LeaseHeld(DomainError):
    code = "lease_held"


class LeaseExpired(DomainError):
    code = "lease_expired"


class StaleGeneration(DomainError):
    code = "stale_generation"


class AlreadyCompleted(DomainError):
    code = "already_completed"


class UsageExceedsSlice(DomainError):
    code = "usage_exceeds_slice"
