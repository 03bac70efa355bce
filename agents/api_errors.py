"""One exception handler gives every API error the same shape:
{"error": {"code": "...", "message": "...", "field"?: "..."}}."""
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from .errors import AppError

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


def _first_field_error(detail, prefix=""):
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = key if key != "non_field_errors" else ""
            path = f"{prefix}.{name}" if prefix and name else (name or prefix)
            return _first_field_error(value, path)
    if isinstance(detail, list) and detail:
        return _first_field_error(detail[0], prefix)
    return prefix, str(detail)


def error_body(code: str, message: str, field: str | None = None) -> dict:
    body = {"code": code, "message": message}
    if field:
        body["field"] = field
    return {"error": body}


def exception_handler(exc, context):
    if isinstance(exc, AppError):
        return Response(error_body(exc.code, exc.message, exc.field), status=exc.status)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    response = drf_exception_handler(exc, context)
    if response is None:
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
