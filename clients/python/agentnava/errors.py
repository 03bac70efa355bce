"""One error type for everything the API refuses, with a subclass for the codes an integration
usually handles on its own (`except MemoryRefused:`). `code`, `status` and `field` are the API's own
(`field` names the API's camelCase field, e.g. `memorySettings.quietMinutes`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class AgentNavaError(Exception):
    """An answer that is not a success: `code` (e.g. 'memory_refused'), the HTTP `status`, the
    `message` for a person, `field` when one is named, and `retry_after` (seconds) when the server
    said how long to wait. A request that never got an answer is an `APIConnectionError`."""

    def __init__(
        self,
        *,
        code: str,
        status: int,
        message: str = "",
        field: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message or code)
        self.code = code
        self.status = status
        self.message = message or code
        self.field = field
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, status={self.status}, field={self.field!r})"


class APIConnectionError(AgentNavaError):
    """No answer: the connection failed or timed out on every try (status 0)."""


class InvalidRequest(AgentNavaError):
    """400: a field is missing, of the wrong type or unknown (`field` names it), or the body is refused."""


class MemoryRefused(InvalidRequest):
    """400 `memory_refused`: the text holds a card, key or id number, or more than 30 lines. Nothing changed."""


class AuthenticationError(AgentNavaError):
    """401: no API key, or one that is not valid (or was revoked)."""


class PermissionDenied(AgentNavaError):
    """403: the key's maker may not do this (`admin_only`), or the team's plan has no memory (`plan_required`)."""


class NotFound(AgentNavaError):
    """404: no such agent, end user, conversation, job, webhook or path for this key's team."""


class Conflict(AgentNavaError):
    """409: the call cannot be done in the state things are in now."""


class MemoryOff(Conflict):
    """409 `memory_off`: memory is off in the agent's published version."""


class MemoryStopped(Conflict):
    """409 `memory_stopped`: the end user asked to stop; nothing more is kept until `stop(False)`."""


class JobRunning(Conflict):
    """409 `job_running`: a Try or Apply job of this agent is still running."""


class IdempotencyKeyInUse(Conflict):
    """409 `idempotency_key_in_use`: a request with this Idempotency-Key is still being answered."""


class MemoryChanged(AgentNavaError):
    """412 `memory_changed`: the memory changed since the read a set or delete was made on. Nothing changed."""


class IdempotencyKeyReused(AgentNavaError):
    """422 `idempotency_key_reused`: this Idempotency-Key was used with another request in the last 24 hours."""


class RateLimited(AgentNavaError):
    """429 `rate_limited`: too many requests for this key; `retry_after` says how many seconds to wait."""


class ServerError(AgentNavaError):
    """5xx: the server or its model failed; nothing was recorded."""


_BY_CODE: dict[str, type[AgentNavaError]] = {
    "memory_refused": MemoryRefused,
    "memory_off": MemoryOff,
    "memory_stopped": MemoryStopped,
    "job_running": JobRunning,
    "idempotency_key_in_use": IdempotencyKeyInUse,
    "memory_changed": MemoryChanged,
    "idempotency_key_reused": IdempotencyKeyReused,
    "rate_limited": RateLimited,
}
_BY_STATUS: dict[int, type[AgentNavaError]] = {
    400: InvalidRequest,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    412: MemoryChanged,
    422: IdempotencyKeyReused,
    429: RateLimited,
}


def error_for(status: int, payload: Any, retry_after: float | None = None) -> AgentNavaError:
    """The error for an answer's status and body (the API's `{"error": {"code", "message", "field"?}}`)."""
    body: Mapping[str, Any] = {}
    if isinstance(payload, Mapping) and isinstance(payload.get("error"), Mapping):
        body = payload["error"]
    code = str(body.get("code") or f"http_{status}")
    message = str(body.get("message") or f"HTTP {status}")
    field = body.get("field")
    cls = _BY_CODE.get(code) or _BY_STATUS.get(status) or (ServerError if status >= 500 else AgentNavaError)
    return cls(
        code=code,
        status=status,
        message=message,
        field=str(field) if field is not None else None,
        retry_after=retry_after,
    )
