"""The input boundary: one middleware that refuses what no view should ever see, before any view
runs, in the answering surface's own shape.

Three surfaces, told apart by the path (`surfaces.http.paths`):
* the website chat (`/embed/...`): JSON `{"error": {"code", "message", "field"?}}`, not kept by any
  cache; CORS-open, by the CORS middleware that runs before this one (`surfaces.http.cors`);
* the REST API (`/api/...`): the same JSON shape (the API's documented error codes);
* the web app (everything else): a plain error page.

What is refused, everywhere:
* a NUL character in the path (answered 404 on the web and the embed: such a path names nothing;
  the API's own views already answer 404 with the resource's code), the query string, a form
  field, a cookie-borne session key (dropped, as if absent) or a JSON body;
* a lone surrogate (U+D800-U+DFFF) in a JSON string (`"\\ud800"`): PostgreSQL and UTF-8 cannot
  hold it;
* JSON nested deeper than MAX_JSON_DEPTH levels (5,000 levels make Python's parser raise
  RecursionError);
* a body over the surface's size (413), read from Content-Length, before Django reads a byte.

A body that is not JSON at all is left to the view, which says so in its own words. The checks
never write anything, so a refused request changes nothing.
"""

import json
import re

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string

from surfaces.http.paths import API_PREFIX, EMBED_PREFIX

EMBED, API, WEB = "embed", "api", "web"
MAX_JSON_DEPTH = 64
# Bytes per body, by surface. The website chat's messages are small (4,000 characters at most).
MAX_BODY_BYTES = {EMBED: 16 * 1024, API: 1024 * 1024, WEB: 1024 * 1024}
BAD_CHARS = re.compile("[\x00\ud800-\udfff]")
SESSION_KEY = re.compile(r"[a-z0-9]{8,64}")


class Refused(Exception):
    def __init__(self, status: int, code: str, message: str, field: str = ""):
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field


def surface(path: str) -> str:
    if path.startswith(EMBED_PREFIX):
        return EMBED
    if path.startswith(API_PREFIX):
        return API
    return WEB


def max_body_bytes(kind: str) -> int:
    return getattr(settings, "BOUNDARY_MAX_BODY_BYTES", {}).get(kind, MAX_BODY_BYTES[kind])


def _what(text: str) -> str:
    return "a NUL character" if "\x00" in text else "a lone surrogate (not valid Unicode)"


def json_check(data, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Walk parsed JSON without recursion; refuse bad characters (naming the field, as the API's
    validation errors do: `actions[0].name`) and nesting deeper than max_depth."""
    stack = [(data, "", 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if BAD_CHARS.search(value):
                raise Refused(400, "invalid_request", f"{path + ': ' if path else ''}Holds {_what(value)}.", path)
            continue
        if not isinstance(value, (dict, list)):
            continue
        if depth > max_depth:
            raise Refused(400, "invalid_request", f"The JSON body nests more than {max_depth} levels deep.")
        if isinstance(value, dict):
            for key, item in value.items():
                if BAD_CHARS.search(key):
                    raise Refused(
                        400, "invalid_request", f"{path + ': ' if path else ''}A field name holds {_what(key)}.", path
                    )
                stack.append((item, f"{path}.{key}" if path else key, depth + 1))
        else:
            for index, item in enumerate(value):
                stack.append((item, f"{path}[{index}]", depth + 1))


def _check_text(where: str, values) -> None:
    for name, value in values:
        if BAD_CHARS.search(name) or BAD_CHARS.search(value):
            raise Refused(
                400,
                "invalid_request",
                f"The {where} holds {_what(name + value)}.",
                "" if BAD_CHARS.search(name) else name,
            )


def inspect(request, kind: str) -> None:
    """Raise Refused for anything the boundary does not let through."""
    if "\x00" in request.path and kind != API:
        raise Refused(404, "not_found", "No such path.")
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    limit = max_body_bytes(kind)
    if length > limit:
        raise Refused(413, "request_too_large", f"A request body is at most {limit} bytes.")
    _check_text("query string", ((k, v) for k, values in request.GET.lists() for v in values))
    content_type = request.content_type or ""
    if kind == WEB:
        if request.method == "POST" and content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            _check_text("form", ((k, v) for k, values in request.POST.lists() for v in values))
        return
    if not length:
        return
    body = request.body
    try:
        data = json.loads(body)
    except RecursionError:
        raise Refused(400, "invalid_request", f"The JSON body nests more than {MAX_JSON_DEPTH} levels deep.") from None
    except ValueError:  # not JSON (UnicodeDecodeError included): the view says so in its words
        return
    json_check(data)


def _session_cookie_sane(request) -> None:
    """A session cookie that could not be a session key is dropped (as if absent): PostgreSQL
    would refuse a NUL in the lookup."""
    name = settings.SESSION_COOKIE_NAME
    value = request.COOKIES.get(name)
    if value is not None and not SESSION_KEY.fullmatch(value):
        del request.COOKIES[name]


def refusal_response(request, kind: str, refused: Refused) -> HttpResponse:
    if kind == WEB:
        html = render_to_string("boundary_refused.html", {"status": refused.status, "message": refused.message})
        return HttpResponse(html, status=refused.status)
    body = {"code": refused.code, "message": refused.message}
    if refused.field:
        body["field"] = refused.field
    response = JsonResponse({"error": body}, status=refused.status)
    if kind == EMBED:
        response["Cache-Control"] = "no-store"  # as every website chat answer
    return response


class InputBoundaryMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        kind = surface(request.path)
        _session_cookie_sane(request)
        try:
            inspect(request, kind)
        except Refused as refused:
            return refusal_response(request, kind, refused)
        except RequestDataTooBig:
            return refusal_response(request, kind, Refused(413, "request_too_large", "The request body is too large."))
        except SuspiciousOperation as exc:  # too many fields, and the like
            return refusal_response(
                request, kind, Refused(400, "invalid_request", str(exc) or "The request was refused.")
            )
        return self.get_response(request)
