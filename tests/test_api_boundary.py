"""The REST API's input boundary under property-based fuzzing (hypothesis, bounded and
derandomised): JSON nested past 64 levels in any shape, bodies past 1 MB, NUL and lone surrogates
anywhere in a body or a query string. Each is refused in the API's JSON error shape (400 or 413),
never a server error or an HTML page, and changes nothing. (tests/test_schema_fuzz.py fuzzes the
API from its schema; this file covers what a schema cannot describe.)"""

import json

import pytest
from django.core.cache import cache
from django.test import Client
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agents import services as agent_services
from surfaces.chat import start as chat_start
from surfaces.http.boundary import MAX_BODY_BYTES, MAX_JSON_DEPTH
from tests.fuzz_helpers import fingerprint

FUZZ = settings(
    derandomize=True,
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
WRITES = [
    ("put", "/api/v1/agents/{a}/end-users/u_1/memory"),
    ("patch", "/api/v1/agents/{a}"),
    ("post", "/api/v1/agents/{a}/conversations"),
    ("post", "/api/v1/conversations/{c}/messages"),
    ("post", "/api/v1/conversations/{c}/events"),
    ("put", "/api/v1/agents/{a}/end-users/u_1/consent"),
    ("post", "/api/v1/agents/{a}/end-users/u_1/memory/stop"),
]


@pytest.fixture
def api(team, agent, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"api_key": None}}
    _, raw = agent_services.api_key_create(team=team, name="boundary")
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert (
        client.get(f"/api/v1/agents/{agent.public_id}").status_code == 200
    )  # the key's last use is written now, not mid-test
    return {"client": client, "a": agent.public_id, "c": conversation.public_id}


def send(api, method, path, body: bytes):
    return getattr(api["client"], method)(path.format(**api), data=body, content_type="application/json")


def refused(response, before, status, code=None):
    event(
        f"{response.status_code} {response.json()['error']['code'] if response['Content-Type'].startswith('application/json') else 'html'}"
    )
    assert response.status_code == status, response.content[:200]
    assert response["Content-Type"].startswith("application/json")
    if code:
        assert response.json()["error"]["code"] == code
    assert fingerprint() == before


def nest(depth: int, shape: list[str], leaf: str) -> str:
    """JSON `depth` levels deep, each level a list or an object (key from `shape`)."""
    opening, closing = [], []
    for level in range(depth):
        key = shape[level % len(shape)]
        if key == "[":
            opening.append("[")
            closing.append("]")
        else:
            opening.append(json.dumps({key: None})[:-5])  # '{"key": '
            closing.append("}")
    return "".join(opening) + leaf + "".join(reversed(closing))


@FUZZ
@given(
    target=st.sampled_from(WRITES),
    depth=st.integers(min_value=MAX_JSON_DEPTH + 1, max_value=5000),
    shape=st.lists(st.sampled_from(["[", "text", "memorySettings", "x"]), min_size=1, max_size=4),
    leaf=st.sampled_from(["1", '"a"', "null", "[]", "{}"]),
    wrap=st.booleans(),
)
def test_json_nested_past_the_limit_is_refused(api, target, depth, shape, leaf, wrap):
    body = nest(depth, shape, leaf)
    if wrap:
        body = json.dumps({"text": "hi"})[:-1] + ', "extra": ' + body + "}"
    before = fingerprint()
    refused(send(api, *target, body.encode()), before, 400, "invalid_request")


@FUZZ
@given(
    target=st.sampled_from(WRITES),
    extra=st.integers(min_value=1, max_value=4 * 1024 * 1024),
    filler=st.sampled_from([b"x", b"\\u0000", b"[", b"\xff"]),
)
def test_bodies_over_the_limit_are_a_413_before_reading(api, target, extra, filler):
    size = MAX_BODY_BYTES["api"] + extra
    body = b'{"text":"' + filler * (size // len(filler)) + b'"}'
    before = fingerprint()
    refused(send(api, *target, body), before, 413, "request_too_large")


@FUZZ
@given(
    target=st.sampled_from(WRITES),
    bad=st.sampled_from(["\x00", "\ud800", "\udc00", "a\x00b", "x\udfffy"]),
    where=st.sampled_from(["value", "key", "nested", "list"]),
)
def test_nul_and_lone_surrogates_anywhere_in_a_body_are_refused(api, target, bad, where):
    body = {
        "value": {"text": bad},
        "key": {bad: "x"},
        "nested": {"a": {"b": [{"c": bad}]}},
        "list": {"text": ["ok", bad]},
    }[where]
    cache.clear()
    before = fingerprint()
    refused(send(api, *target, json.dumps(body).encode()), before, 400, "invalid_request")


@FUZZ
@given(name=st.sampled_from(["limit", "before", "q", "x\x00"]), value=st.sampled_from(["\x00", "a\x00", "%00"]))
def test_nul_in_a_query_string_is_refused(api, name, value):
    from urllib.parse import urlencode

    before = fingerprint()
    response = api["client"].get(f"/api/v1/agents/{api['a']}/memories?" + urlencode({name: value}))
    event(str(response.status_code))
    assert response.status_code == 400 and response["Content-Type"].startswith("application/json")
    assert fingerprint() == before
