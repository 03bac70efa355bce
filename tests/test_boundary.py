"""The input boundary (surfaces/http/boundary.py): NUL, lone surrogates, over-deep JSON and oversize
bodies are refused on every surface, in that surface's shape, before any view runs; nothing is
written; no 500 anywhere."""

import json

import pytest
from django.core.cache import cache
from django.test import Client

from agents import services as agent_services
from agents.models import AgentVersion, ApiKey, Conversation, EndUser, Message
from memory.models import Memory
from memory.store.services import memory_set
from surfaces.embed.services import end_user_hash, same_secret

DEEP = ("[" * 5000 + "]" * 5000).encode()
DEEP_OBJ = ('{"a":' * 2000 + "1" + "}" * 2000).encode()


@pytest.fixture(autouse=True)
def fresh_rate_counts():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def anon():
    return Client()


@pytest.fixture
def api_client(team):
    _, raw = agent_services.api_key_create(team=team, name="tests")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def raw_post(client, path, body: bytes, method="post"):
    return getattr(client, method)(path, data=body, content_type="application/json")


def error(response):
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    return response.json()["error"]


def counts():
    return (
        EndUser.objects.count(),
        Conversation.objects.count(),
        Message.objects.count(),
        Memory.objects.count(),
        AgentVersion.objects.count(),
    )


# --- Constant-time comparison -----------------------------------------------------------------


def test_same_secret_never_raises():
    assert same_secret("abc", "abc") and not same_secret("abc", "abd")
    assert not same_secret("abc", "ä€😀") and not same_secret("abc", "\ud800") and not same_secret("abc", "\x00")


# --- The website chat --------------------------------------------------------------------------


def _start(client, agent, body):
    return client.post(
        f"/embed/v1/agents/{agent.public_id}/start", data=json.dumps(body), content_type="application/json"
    )


@pytest.mark.parametrize(
    "body, field",
    [
        ({"endUserId": "u_1", "endUserHash": "ä" * 64}, None),  # refused by the hash check, not a 500
        ({"visitorId": "v\x00"}, "visitorId"),
        ({"visitorId": "hi \ud800"}, "visitorId"),
        ({"endUserId": "u\x00"}, "endUserId"),
    ],
)
def test_embed_start_refuses_bad_text_without_a_server_error(anon, agent, body, field):
    before = counts()
    response = _start(anon, agent, body)
    assert response.status_code in (400, 403)
    got = error(response)
    if field:
        assert (response.status_code, got["code"], got["field"]) == (400, "invalid_request", field)
    assert response["Access-Control-Allow-Origin"] == "*"
    assert counts() == before


def test_embed_message_with_nul_or_a_lone_surrogate_is_refused(anon, agent):
    chat = _start(anon, agent, {}).json()["conversation"]
    before = counts()
    for text in ("hi \x00 there", "hi \ud800"):
        response = anon.post(
            f"/embed/v1/conversations/{chat['id']}/messages",
            data=json.dumps({"token": chat["token"], "text": text}),
            content_type="application/json",
        )
        assert (response.status_code, error(response)["code"], error(response)["field"]) == (
            400,
            "invalid_request",
            "text",
        )
    assert counts() == before


@pytest.mark.parametrize("body", [DEEP, DEEP_OBJ, ("[" * 65 + "]" * 65).encode()])
def test_embed_deep_json_is_refused(anon, agent, body):
    before = counts()
    response = raw_post(anon, f"/embed/v1/agents/{agent.public_id}/start", body)
    assert response.status_code == 400 and "levels deep" in error(response)["message"]
    assert counts() == before


def test_embed_json_of_64_levels_reaches_the_view(anon, agent):
    response = raw_post(anon, f"/embed/v1/agents/{agent.public_id}/start", ("[" * 64 + "]" * 64).encode())
    assert (response.status_code, error(response)["code"]) == (400, "invalid_json")  # the view: not an object


def test_embed_oversize_body_is_a_413_before_it_is_read(anon, agent):
    response = raw_post(anon, f"/embed/v1/agents/{agent.public_id}/start", b'{"a":"' + b"x" * (3 * 1024 * 1024) + b'"}')
    assert (response.status_code, error(response)["code"]) == (413, "request_too_large")
    assert response["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize(
    "path",
    [
        "/embed/v1/agents/%00/config",
        "/embed/v1/agents/agt_%00x/start",
        "/embed/v1/conversations/%00/messages",
        "/embed/v1/conversations/conv_%00/transcript",
    ],
)
def test_embed_nul_in_a_path_is_not_found(anon, path):
    response = anon.post(path, data="{}", content_type="application/json")
    assert response.status_code == 404 and error(response)["code"] == "not_found"


def test_embed_nul_in_a_query_string(anon, agent):
    response = anon.get(f"/embed/v1/agents/{agent.public_id}/config?x=%00")
    assert (response.status_code, error(response)["code"]) == (400, "invalid_request")


def test_embed_hash_check_with_non_ascii_is_a_403(anon, agent):
    response = _start(anon, agent, {"endUserId": "u_1", "endUserHash": "é" * 64})
    assert (response.status_code, error(response)["code"]) == (403, "invalid_end_user_hash")
    ok = _start(anon, agent, {"endUserId": "u_1", "endUserHash": end_user_hash(agent, "u_1")})
    assert ok.status_code == 200


# --- The REST API ------------------------------------------------------------------------------


def test_api_deep_json_is_refused_in_the_api_shape(api_client, agent):
    before = counts()
    for method, path in (
        ("put", "/api/v1/agents/{}/end-users/u_1/memory"),
        ("patch", "/api/v1/agents/{}"),
        ("post", "/api/v1/agents/{}/conversations"),
    ):
        response = raw_post(api_client, path.format(agent.public_id), DEEP, method=method)
        assert (response.status_code, error(response)["code"]) == (400, "invalid_request"), (method, path)
    assert counts() == before


def test_api_huge_body_is_a_413_in_the_api_shape(api_client, agent):
    response = raw_post(
        api_client,
        f"/api/v1/agents/{agent.public_id}/end-users/u_1/memory",
        b'{"text":"' + b"x" * (30 * 1024 * 1024) + b'"}',
        method="put",
    )
    assert (response.status_code, error(response)["code"]) == (413, "request_too_large")
    assert not EndUser.objects.exists()


def test_api_lone_surrogate_and_nul_name_the_field(api_client, agent):
    for text in ("a\ud800", "a\x00"):
        response = raw_post(
            api_client,
            f"/api/v1/agents/{agent.public_id}/end-users/u_1/memory",
            json.dumps({"text": text}).encode(),
            method="put",
        )
        got = error(response)
        assert (response.status_code, got["code"], got["field"]) == (400, "invalid_request", "text")
        assert got["message"].startswith("text: ")
    response = raw_post(
        api_client,
        f"/api/v1/agents/{agent.public_id}",
        json.dumps({"actions": [{"name": "a\x00"}]}).encode(),
        method="patch",
    )
    assert error(response)["field"] == "actions[0].name"
    assert not EndUser.objects.exists()


def test_api_nul_in_a_query_string(api_client, agent):
    response = api_client.get(f"/api/v1/agents/{agent.public_id}/memories?q=%00")
    assert (response.status_code, error(response)["code"]) == (400, "invalid_request")


# --- The web app -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/agents/%00/", "/agents/%00/memory/", "/agents/agt_%00/versions/"])
def test_web_nul_in_a_path_is_a_plain_404(member_client, path):
    response = member_client.get(path)
    assert response.status_code == 404 and b"Not found" in response.content


@pytest.mark.parametrize("query", ["q=%00", "note_for=%00", "after=%00", "q=a&x%00=1"])
def test_web_nul_in_a_query_string_is_a_plain_400(member_client, agent, query):
    response = member_client.get(f"/agents/{agent.public_id}/memory/?{query}")
    assert response.status_code == 400 and b"NUL" in response.content


def test_web_nul_in_form_fields_is_refused_and_changes_nothing(member_client, agent, user):
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id="u_1")
    memory = memory_set(end_user=end_user, text="Likes tea.")
    before = counts(), ApiKey.objects.count(), agent.draft_id if hasattr(agent, "draft_id") else None
    posts = [
        (f"/agents/{agent.public_id}/memory/people/{end_user.pk}/replace/", {"text": "Likes\x00 coffee."}),
        (f"/agents/{agent.public_id}/", {"instructions": "Be kind\x00", "guardrails": "", "actions": ""}),
        ("/agents/new/", {"name": "New\x00agent"}),
        ("/settings/api-keys/", {"name": "key\x00"}),
        (f"/agents/{agent.public_id}/memory/", {"instructions": "x\x00", "keepForDays": "30", "quietMinutes": "15"}),
    ]
    for path, data in posts:
        response = member_client.post(path, data)
        assert response.status_code == 400, path
    memory.refresh_from_db()
    assert memory.text == "Likes tea."
    assert (counts(), ApiKey.objects.count(), agent.draft_id if hasattr(agent, "draft_id") else None) == before


def test_web_oversize_form_is_a_413_page(member_client, agent):
    response = member_client.post("/agents/new/", {"name": "x" * (2 * 1024 * 1024)})
    assert response.status_code == 413 and b"Too large" in response.content


def test_a_session_cookie_with_nul_is_ignored(agent):
    client = Client()
    client.cookies["sessionid"] = "abc\x00def"
    assert client.get("/").status_code == 302  # not signed in: to the sign-in page


def test_a_web_form_field_over_its_column_is_a_400_naming_the_limit_and_nothing_changes(member_client, agent, team):
    from agents.models import Agent, Invitation
    from webhooks.models import Endpoint

    before = (Agent.objects.count(), ApiKey.objects.count(), Invitation.objects.count(), Endpoint.objects.count())
    posts = [
        ("/agents/new/", {"name": "a" * 121}, "at most 120 characters"),
        ("/settings/api-keys/", {"name": "k" * 81}, "at most 80 characters"),
        ("/settings/team/", {"email": "p" * 250 + "@example.com"}, "at most 254 characters"),
        (
            "/settings/webhooks/",
            {"url": "https://example.com/" + "x" * 500, "events": ["memory.updated"]},
            "500",
        ),
    ]
    for path, data, says in posts:
        response = member_client.post(path, data)
        assert response.status_code == 400, path
        assert says in response.content.decode(), path
    assert (
        Agent.objects.count(),
        ApiKey.objects.count(),
        Invitation.objects.count(),
        Endpoint.objects.count(),
    ) == before
