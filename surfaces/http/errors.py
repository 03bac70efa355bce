"""One exception handler gives every API error the same shape:
{"error": {"code": "...", "message": "...", "field"?: "..."}}."""

from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from agents.errors import AppError
from agents.ports import ports

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


# The error codes of this app's API, with their status and when. The apps above add their own
# through the port `ports.error_codes`; `error_codes()` is the one list the OpenAPI schema documents
# (surfaces.http.base.errors) and the tests check against.
ERROR_CODES: dict[str, tuple[int, str]] = {
    "invalid_request": (
        400,
        "A field or query parameter is missing, has the wrong type or size, or is unknown; `field` names it.",
    ),
    "invalid_json": (400, "The body is not valid JSON."),
    "invalid_config": (400, "The configuration change is refused (e.g. quietMinutes 7); nothing was published."),
    "invalid_end_user_id": (400, "endUserId must be 1 to 200 characters."),
    "end_user_id_not_normal": (
        400,
        "endUserId is not in its one normal form: Unicode NFC, no whitespace at the start or end, no control "
        "characters. It is never trimmed or changed for you (so a hash or a lookup is always of the id sent).",
    ),
    "invalid_message": (400, "A message needs some text."),
    "not_authenticated": (401, "No API key was sent: use Authorization: Bearer <key>."),
    "invalid_api_key": (401, "The API key is not valid or has been revoked."),
    "plan_required": (403, "Memory comes with the Team plan and up."),
    "admin_only": (
        403,
        "Only a team owner or admin can do this (API keys, webhook endpoints, members, deleting an agent, "
        "the team-wide erase, the audit log); a key acts with its maker's role in the team.",
    ),
    "agent_not_found": (404, "No agent with this id for this key's team (another team's agent answers the same)."),
    "conversation_not_found": (404, "No conversation with this id for this key's team."),
    "end_user_not_found": (
        404,
        "No end user with this endUserId on this agent (for the team-wide erase: on any agent of this key's team).",
    ),
    "not_found": (404, "No such path."),
    "method_not_allowed": (405, "This path does not take this method."),
    "not_acceptable": (406, "The API answers JSON only."),
    "message_too_long": (413, "A message is at most 4000 characters."),
    "request_too_large": (413, "The request body is over 1 MB; nothing was read."),
    "unsupported_media_type": (415, "Send the body as application/json."),
    "rate_limited": (429, "Too many requests for this API key; wait the Retry-After seconds."),
    "model_error": (502, "The model could not give a usable answer; nothing was recorded."),
    "model_malformed": (502, "The model's answer was not the JSON asked for; nothing was recorded."),
    "model_timeout": (502, "The model did not answer in time; nothing was recorded."),
    "model_rate_limited": (502, "The model server is rate limited; nothing was recorded."),
    "model_unreachable": (502, "The model server could not be reached; nothing was recorded."),
    "model_refused": (502, "The model refused to answer; nothing was recorded."),
    "model_too_large": (502, "The model's answer was over MODEL_ANSWER_MAX_BYTES (64 KB); nothing was recorded."),
}


def error_codes() -> dict[str, tuple[int, str]]:
    """Every error code the API answers, by status: this app's and those the apps above add."""
    return dict(sorted({**ERROR_CODES, **ports.error_codes}.items(), key=lambda item: item[1][0]))


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
        return Response(error_body(exc.code, exc.message, exc.field), status=exc.status)
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
