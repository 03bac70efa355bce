"""Two ways to call the REST API with one interface: in process through DRF's test client (the
default: no server thread, no socket, the test's own transaction) and over real HTTP against
pytest-django's live server (the smoke set: what an integrator's code does)."""

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from rest_framework.test import APIClient

from agents import services as agent_services


@dataclass
class Answer:
    status: int
    body: object
    headers: dict = field(default_factory=dict)

    @property
    def code(self) -> str | None:
        if isinstance(self.body, dict) and isinstance(self.body.get("error"), dict):
            return self.body["error"].get("code")
        return None


class Api:
    def __init__(self, base_url: str, key: str | None):
        self.base_url = base_url.rstrip("/")
        self.key = key

    def call(
        self, method: str, path: str, body=None, *, raw: bytes | None = None, headers: dict | None = None
    ) -> Answer:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.key:
            request.add_header("Authorization", f"Bearer {self.key}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, payload, got = response.status, response.read(), dict(response.headers)
        except urllib.error.HTTPError as error:
            status, payload, got = error.code, error.read(), dict(error.headers)
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload.decode(errors="replace")
        return Answer(status, parsed, {k.lower(): v for k, v in got.items()})

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.call("POST", path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.call("PUT", path, body, **kw)

    def patch(self, path, body=None, **kw):
        return self.call("PATCH", path, body, **kw)

    def delete(self, path, **kw):
        return self.call("DELETE", path, **kw)


class InProcessApi(Api):
    """The same calls and answers as `Api`, through DRF's in-process client."""

    def __init__(self, key: str | None, prefix: str = "/api/v1"):
        super().__init__(prefix, key)

    def call(
        self, method: str, path: str, body=None, *, raw: bytes | None = None, headers: dict | None = None
    ) -> Answer:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        headers = dict(headers or {})
        content_type = headers.pop("Content-Type", "application/json")
        extra = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in headers.items()}
        if self.key and "HTTP_AUTHORIZATION" not in extra:
            extra["HTTP_AUTHORIZATION"] = f"Bearer {self.key}"
        # The request target as sent, as gunicorn (RAW_URI) and uWSGI (REQUEST_URI) pass it: Django's
        # test client decodes the path, so "bob%2Fmemory" would otherwise be two segments.
        extra.setdefault("REQUEST_URI", self.base_url + path)
        response = APIClient().generic(
            method, self.base_url + path, data=data or b"", content_type=content_type, **extra
        )
        payload = response.content
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload.decode(errors="replace")
        return Answer(response.status_code, parsed, {k.lower(): v for k, v in response.items()})


def api_in_process(team) -> InProcessApi:
    _, raw = agent_services.api_key_create(team=team, name="tests")
    return InProcessApi(raw)


def api_for(live_server, team) -> Api:
    _, raw = agent_services.api_key_create(team=team, name="tests")
    return Api(live_server.url + "/api/v1", raw)
