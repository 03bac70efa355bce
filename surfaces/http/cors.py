"""CORS for the website chat, by django-cors-headers (`settings.CORS_*`, only for `EMBED_PREFIX`).

Two things stay as every embed has always had them, on top of the library's own answers: a
preflight is answered 204 No Content (the library says 200), and a request that sent no Origin (a
same-site page, a server, a test client) gets the same CORS headers as one that did, since the
website chat answers every caller alike (no cookies, no credentials).
"""

from corsheaders.middleware import CorsMiddleware
from django.http import HttpRequest
from django.http.request import HttpHeaders
from django.http.response import HttpResponseBase


class _WithOrigin:
    """A request as django-cors-headers reads it, holding an Origin when it sent none."""

    def __init__(self, request: HttpRequest):
        self._request = request
        self.headers = HttpHeaders({**request.META, "HTTP_ORIGIN": "null"})

    def __getattr__(self, name: str):
        return getattr(self._request, name)


class EmbedCorsMiddleware(CorsMiddleware):
    def check_preflight(self, request: HttpRequest) -> HttpResponseBase | None:
        response = super().check_preflight(request)
        if response is not None:
            response.status_code = 204
            response["Cache-Control"] = "no-store"  # as every website chat answer
        return response

    def add_response_headers(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if not request.headers.get("origin"):
            return super().add_response_headers(_WithOrigin(request), response)  # type: ignore[arg-type]
        return super().add_response_headers(request, response)
