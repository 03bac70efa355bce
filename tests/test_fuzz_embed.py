"""Property-based fuzzing of the website chat's public JSON endpoints (hypothesis, bounded and
derandomised so CI is repeatable): whatever the body, path id or query string, no answer is a
server error, every error has the embed's JSON shape and CORS, and a refused request changes
nothing in the database."""

import json

import pytest
from django.core.cache import cache
from django.test import Client
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from surfaces.chat import start as chat_start
from surfaces.embed.services import conversation_token, end_user_hash, visitor_id_issue
from tests.fuzz_helpers import any_text, fingerprint, json_value

FIELDS = ["visitorId", "endUserId", "endUserHash", "memory", "switch", "agreed", "source", "token", "text", "on"]
FUZZ = settings(
    derandomize=True,
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def world(agent, settings):
    settings.EMBED_RATE_LIMITS = {
        scope: (10**6, 60)
        for scope in (
            "visitor_messages",
            "agent_messages",
            "visitor_requests",
            "agent_requests",
            "ip_new_visitors",
            "ip_messages",
            "ip_requests",
        )
    }
    conversation = chat_start.conversation_start(agent=agent, external_id="visitor_fuzz")
    return {
        "agent": agent,
        "conversation": conversation,
        "token": conversation_token(conversation),
        "visitor": visitor_id_issue(agent),
        "hash": end_user_hash(agent, "u_site"),
    }


def check(response, before):
    event(f"status {response.status_code}")
    assert response.status_code < 500, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    assert response["Access-Control-Allow-Origin"] == "*"
    if response.status_code >= 400:
        error = response.json()["error"]
        assert isinstance(error["code"], str) and isinstance(error["message"], str)
        assert fingerprint() == before, f"refused ({response.status_code} {error['code']}) yet the database changed"


def _resolve(value, world):
    return (
        {"TOKEN": world["token"], "VISITOR": world["visitor"], "HASH": world["hash"]}.get(value, value)
        if isinstance(value, str)
        else value
    )


ENDPOINTS = ["start", "consent", "transcript", "messages", "switch"]


@FUZZ
@given(
    endpoint=st.sampled_from(ENDPOINTS),
    body=st.dictionaries(
        st.sampled_from(FIELDS) | any_text,
        json_value(FIELDS)
        | st.sampled_from(["TOKEN", "VISITOR", "HASH", "u_site", True, False, "chat_prompt", "hello"]),
        max_size=6,
    ),
    as_raw=st.booleans(),
)
def test_embed_json_bodies_never_make_a_server_error(world, endpoint, body, as_raw):
    cache.clear()
    body = {key: _resolve(value, world) for key, value in body.items()}
    if endpoint in ("start", "consent"):
        path = f"/embed/v1/agents/{world['agent'].public_id}/{endpoint}"
    else:
        path = f"/embed/v1/conversations/{world['conversation'].public_id}/{endpoint}"
    # \u-escaped, or raw UTF-8 (a lone surrogate then becomes bytes no UTF-8 decoder takes)
    data = json.dumps(body, ensure_ascii=not as_raw).encode("utf-8", "surrogatepass")
    before = fingerprint()
    check(Client().post(path, data=data, content_type="application/json"), before)


@FUZZ
@given(
    endpoint=st.sampled_from(ENDPOINTS + ["config"]),
    ident=any_text,
    query=st.dictionaries(any_text, any_text, max_size=3),
)
def test_embed_path_ids_and_query_strings_never_make_a_server_error(world, endpoint, ident, query):
    cache.clear()
    from urllib.parse import quote, urlencode

    def enc(text):
        return quote(text.encode("utf-8", "surrogatepass"), safe="")

    kind = "agents" if endpoint in ("start", "consent", "config") else "conversations"
    path = f"/embed/v1/{kind}/{enc(ident)}/{endpoint}"
    qs = urlencode([(k.encode("utf-8", "surrogatepass"), v.encode("utf-8", "surrogatepass")) for k, v in query.items()])
    before = fingerprint()
    client = Client()
    if endpoint == "config":
        response = client.get(f"{path}?{qs}")
    else:
        response = client.post(
            f"{path}?{qs}", data=json.dumps({"token": world["token"], "text": "hi"}), content_type="application/json"
        )
    if response.status_code == 404 and not response["Content-Type"].startswith("application/json"):
        pytest.fail(f"a plain 404 page on the embed: {path}")
    check(response, before)


@FUZZ
@given(
    raw=st.binary(max_size=300)
    | st.sampled_from(
        [b"[" * 3000 + b"]" * 3000, b'{"text":"\\ud800"}', b"\xff\xfe", b'{"a":' * 200 + b"1" + b"}" * 200]
    )
)
def test_embed_raw_bytes_never_make_a_server_error(world, raw):
    cache.clear()
    before = fingerprint()
    response = Client().post(
        f"/embed/v1/agents/{world['agent'].public_id}/start", data=raw, content_type="application/json"
    )
    check(response, before)
