"""API routes on the path as it was sent, so a path segment is one id whatever it holds.

A WSGI server decodes the path before Django sees it: `end-users/bob%2Fmemory` arrives as
`end-users/bob/memory`, and would be `bob`'s memory route instead of the person `bob/memory`.
`RawPathMiddleware` takes the request target as sent (gunicorn's `RAW_URI`, uWSGI's and
mod_wsgi's `REQUEST_URI`; `RawTargetRequestHandler` gives Django's development and test servers
the same) and rewrites `request.path_info` of an API request so that each segment is decoded
except for `%` and `/`, which stay escaped (`%25`, `%2F`). Routes then split on real slashes only,
and the `end_user_id` converter (`[^/]+`, unescaped in `to_python`) answers the segment's exact id.
Where no raw target is available the decoded path is used as before: an id holding `/` cannot be
addressed there (it is split, as Django always did), so run a server that passes it (docs)."""

from urllib.parse import unquote, urlsplit

from django.core.servers.basehttp import WSGIRequestHandler

from surfaces.http.paths import API_PREFIX


def escape_segment(decoded: str) -> str:
    """A decoded segment with only `%` and `/` escaped: unambiguous to split and to unescape."""
    return decoded.replace("%", "%25").replace("/", "%2F")


def raw_target_path(meta: dict) -> str | None:
    """The path of the request target as sent (still percent-encoded), or None when the server
    did not pass it."""
    target = meta.get("RAW_URI") or meta.get("REQUEST_URI")
    if not target:
        return None
    if not target.startswith("/"):  # absolute-form (a proxy's request): keep only its path
        target = urlsplit(target).path or "/"
    return target.split("?", 1)[0].split("#", 1)[0]


def encoded_path_info(path_info: str, raw_path: str | None, script_name: str = "") -> str:
    """`path_info` with each segment escaped by `escape_segment`, its segments taken from the raw
    path when that is the same path (decoded, it equals `path_info`); else from `path_info`."""
    if raw_path is not None and script_name and raw_path.startswith(script_name):
        raw_path = raw_path[len(script_name) :]
    if raw_path is not None and unquote(raw_path) == path_info:
        segments = [unquote(segment) for segment in raw_path.split("/")]
    else:
        segments = path_info.split("/")
    return "/".join(escape_segment(segment) for segment in segments)


class RawPathMiddleware:
    """For API paths: route on the segments as sent (module docstring)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path_info.startswith(API_PREFIX):
            request.path_info = encoded_path_info(
                request.path_info, raw_target_path(request.META), request.META.get("SCRIPT_NAME", "")
            )
        return self.get_response(request)


class EndUserIdConverter:
    """An endUserId in an API path: one segment, whatever it holds once unescaped ("/", "%", "?",
    "#", spaces, any script); the services decide what is a valid id."""

    regex = r"[^/]+"

    def to_python(self, value):
        return unquote(value)

    def to_url(self, value):
        return value


class RawTargetRequestHandler(WSGIRequestHandler):
    """Django's development server's handler, passing the request target as sent in `RAW_URI`
    (as gunicorn does): `manage.py` installs it for `runserver`."""

    def get_environ(self):
        environ = super().get_environ()
        environ.setdefault("RAW_URI", self.path)
        return environ


def install_raw_target_dev_server() -> None:
    """`runserver` builds its handler from `basehttp.WSGIRequestHandler` when it starts."""
    from django.core.servers import basehttp

    basehttp.WSGIRequestHandler = RawTargetRequestHandler  # type: ignore[misc]  # replacing the class is the point
