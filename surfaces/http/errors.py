"""One exception handler gives every API error the same shape:
{"error": {"code": "...", "message": "...", "field"?: "..."}}."""

from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from agents.errors import AGENT_ERROR_CODES, AppError
from memory.store.errors import MEMORY_ERROR_CODES
from webhooks.errors import WEBHOOK_ERROR_CODES

DRF_CODES = {
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "invalid_api_key",
    exceptions.PermissionDenied: "permission_denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.ParseError: "invalid_json",
    exceptions.Throttled: "rate_limited",
    exceptions.NotAcceptable: "not_acceptable",
}

# The codes of the HTTP surfaces themselves (the input boundary, parsing, keys, routing, limits),
# with their status and when.
HTTP_ERROR_CODES: dict[str, tuple[int, str]] = {
    "invalid_request": (
        400,
        "A field or query parameter is missing, has the wrong type or size, or is unknown; `field` names it.",
    ),
    "invalid_json": (400, "The body is not valid JSON."),
    "not_authenticated": (401, "No API key was sent: use Authorization: Bearer <key>."),
    "invalid_api_key": (401, "The API key is not valid or has been revoked."),
    "not_found": (404, "No such path."),
    "method_not_allowed": (405, "This path does not take this method."),
    "not_acceptable": (406, "The API answers JSON only."),
    "idempotency_key_in_use": (
        409,
        "A request with this Idempotency-Key is still being answered; try again after Retry-After (1 second).",
    ),
    "idempotency_key_reused": (
        422,
        "This Idempotency-Key was used in the last 24 hours with another request (method, path or body); "
        "use a new key for a new request.",
    ),
    "request_too_large": (413, "The request body is over 1 MB; nothing was read."),
    "unsupported_media_type": (415, "Send the body as application/json."),
    "rate_limited": (429, "Too many requests for this API key; wait the Retry-After seconds."),
}


def merged(*tables: dict[str, tuple[int, str]]) -> dict[str, tuple[int, str]]:
    """One table from each app's own, in the order given; a code described twice is a mistake and
    raises at import (a code's status lives in one place)."""
    out: dict[str, tuple[int, str]] = {}
    for table in tables:
        for code, entry in table.items():
            if code in out:
                raise ValueError(f"The error code {code!r} is described twice")
            out[code] = entry
    return out


# Every error code the API answers, with its status and when: the one table the exception handler
# answers with and the OpenAPI schema documents (surfaces.http.base.errors), by status (a stable sort:
# within a status, the surface's own codes first, then each app's, from agents up).
ERROR_CODES: dict[str, tuple[int, str]] = dict(
    sorted(
        merged(HTTP_ERROR_CODES, AGENT_ERROR_CODES, MEMORY_ERROR_CODES, WEBHOOK_ERROR_CODES).items(),
        key=lambda item: item[1][0],
    )
)


def error_codes() -> dict[str, tuple[int, str]]:
    """Every error code the API answers, by status (a copy of `ERROR_CODES`)."""
    return dict(ERROR_CODES)


def status_of(exc: AppError) -> int:
    """The status an AppError is answered with: its code's in the table, else the error's own."""
    entry = ERROR_CODES.get(exc.code)
    return entry[0] if entry else exc.status


def _first_field_error(detail, prefix=""):
    if isinstance(detail, dict):
        for key, value in detail.items():
            if isinstance(key, int):  # an item of a list field: actions[0].name
                return _first_field_error(value, f"{prefix}[{key}]")
            name = key if key != "non_field_errors" else ""
            path = f"{prefix}.{name}" if prefix and name else (name or prefix)
            return _first_field_error(value, path)
    if isinstance(detail, list) and detail:
        if all(isinstance(item, dict) for item in detail):  # a list serializer's errors, one per item
            for index, item in enumerate(detail):
                if item:
                    return _first_field_error(item, f"{prefix}[{index}]")
        return _first_field_error(detail[0], prefix)
    return prefix, str(detail)


def error_body(code: str, message: str, field: str | None = None) -> dict:
    body = {"code": code, "message": message}
    if field:
        body["field"] = field
    return {"error": body}


def _key_team_gone(context) -> bool:
    """Whether the request came with a key whose team was deleted while the request ran (its rows
    went from under it): the answer is then the key's 401, not a server error."""
    from agents.models import Team

    team = getattr(getattr(context.get("request"), "user", None), "team", None)
    if team is None:
        return False
    try:
        return not Team.objects.filter(pk=team.pk).exists()
    except Exception:  # noqa: BLE001 - the database itself failed: that stays the server error it is
        return False


def exception_handler(exc, context):
    if isinstance(exc, AppError):
        return Response(error_body(exc.code, exc.message, exc.field), status=status_of(exc))
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    response = drf_exception_handler(exc, context)
    if response is None:
        if _key_team_gone(context):
            return Response(error_body("invalid_api_key", ERROR_CODES["invalid_api_key"][1]), status=401)
        return None
    if isinstance(exc, exceptions.ValidationError):
        field, message = _first_field_error(exc.detail)
        text = f"{field}: {message}" if field else message
        response.data = error_body("invalid_request", text, field or None)
        response.status_code = status.HTTP_400_BAD_REQUEST
        return response
    code = next((c for cls, c in DRF_CODES.items() if isinstance(exc, cls)), "error")
    detail = exc.detail if isinstance(exc, exceptions.APIException) else str(exc)
    response.data = error_body(code, str(detail))
    return response
