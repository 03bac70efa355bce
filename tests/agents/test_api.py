"""The REST API for agents, versions, conversations, messages and events, in process (DRF's client);
the keys' answers also over real HTTP against the live server.

Memory endpoints are in tests/memory/test_api.py; the tenant matrix in tests/agents/test_api_isolation.py."""

import pytest

from agents import services
from agents.models import ActionRun, Agent, AgentVersion, ApiKey, Conversation, Message, Plan
from memory.models import Memory
from memory.store.services import memory_set
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start
from tests.api_helpers import Api, InProcessApi, api_in_process
from tests.conftest import make_team
from tests.fake_openai import chat_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(team):
    return api_in_process(team)


# --- agent.get / agent.update / delete / versions --------------------------------------------


def test_agent_get_answers_every_memory_setting_and_the_notice(api, agent):
    answer = api.get(f"/agents/{agent.public_id}")
    assert answer.status == 200
    body = answer.body
    assert body["id"] == agent.public_id and body["name"] == "Support" and body["version"] == 1
    settings = body["memorySettings"]
    assert set(settings) == {
        "on",
        "instructions",
        "keepForDays",
        "quietMinutes",
        "showSwitch",
        "askFirst",
        "privacyUrl",
        "notice",
    }
    assert settings["on"] is True and settings["quietMinutes"] == 15 and settings["keepForDays"] == 90
    # R27: says it is an AI that remembers, the team can see and change it, how long, and the phrase.
    notice = settings["notice"]
    assert "AI assistant" in notice and "remembers" in notice and "90 days" in notice
    assert "can see and change" in notice and "stop remembering me" in notice
    assert body["actions"] == [{"name": "renew_plan", "label": "Renewed the plan"}]


def test_the_notice_is_null_while_memory_is_off_and_links_the_privacy_url(api, agent):
    api.patch(f"/agents/{agent.public_id}", {"memorySettings": {"privacyUrl": "https://acme.test/privacy"}})
    assert "https://acme.test/privacy" in api.get(f"/agents/{agent.public_id}").body["memorySettings"]["notice"]
    api.patch(f"/agents/{agent.public_id}", {"memorySettings": {"on": False}})
    assert api.get(f"/agents/{agent.public_id}").body["memorySettings"]["notice"] is None


def test_no_notice_when_the_plan_no_longer_has_memory(api, agent, team):
    team.plan = Plan.PRO
    team.save(update_fields=["plan"])
    body = api.get(f"/agents/{agent.public_id}").body
    assert body["memorySettings"]["on"] is True and body["memorySettings"]["notice"] is None


def test_agent_update_publishes_a_new_version_at_once(api, agent):
    change = {
        "memorySettings": {
            "on": True,
            "instructions": "Keep which office they work from.",
            "keepForDays": 90,
            "quietMinutes": 15,
        }
    }
    answer = api.patch(f"/agents/{agent.public_id}", change)
    assert answer.status == 200
    assert answer.body["version"] == 2
    assert answer.body["memorySettings"]["instructions"] == "Keep which office they work from."
    published = AgentVersion.objects.published(agent)
    assert published.number == 2 and published.source == "api"
    assert published.config["memorySettings"]["instructions"] == "Keep which office they work from."
    # The same change again publishes nothing.
    assert api.patch(f"/agents/{agent.public_id}", change).body["version"] == 2
    assert AgentVersion.objects.filter(agent=agent).count() == 2


def test_agent_update_leaves_an_open_web_draft_alone(api, agent, user):
    services.agent_draft_update(agent=agent, changes={"guardrails": "No refunds."}, user=user)
    api.patch(f"/agents/{agent.public_id}", {"memorySettings": {"quietMinutes": 5}})
    assert agent.draft.config["guardrails"] == "No refunds."
    assert AgentVersion.objects.published(agent).config["guardrails"] == ""


@pytest.mark.parametrize(
    "change, field",
    [
        ({"memorySettings": {"quietMinutes": 7}}, "memorySettings.quietMinutes"),
        ({"memorySettings": {"quietMinutes": "15"}}, "memorySettings.quietMinutes"),
        ({"memorySettings": {"keepForDays": 0}}, "memorySettings.keepForDays"),
        ({"memorySettings": {"keepForDays": 4000}}, "memorySettings.keepForDays"),
        ({"memorySettings": {"on": "yes"}}, "memorySettings.on"),
        ({"memorySettings": {"instructions": 5}}, "memorySettings.instructions"),
        ({"memorySettings": {"instructions": "x" * 4001}}, "memorySettings.instructions"),
        ({"memorySettings": {"remember": True}}, "memorySettings.remember"),
        ({"memorySettings": {"notice": "Hi"}}, "memorySettings.notice"),
        ({"memorySettings": "on"}, "memorySettings"),
        ({"colour": "blue"}, "colour"),
        ({"name": "Renamed"}, "name"),
        ({"actions": [{"name": "renew_plan", "price": 3}]}, "actions[0].price"),
        ({"actions": [{"name": "renew_plan"}, {"label": "x"}]}, "actions[1].name"),
        ({"actions": "renew_plan"}, "actions"),
        ({"guardrails": "a\x00b"}, "guardrails"),
    ],
)
def test_agent_update_refuses_bad_fields_naming_them_and_publishes_nothing(api, agent, change, field):
    answer = api.patch(f"/agents/{agent.public_id}", change)
    assert answer.status == 400, answer.body
    assert (answer.code, answer.body["error"]["field"]) == ("invalid_request", field)
    assert answer.body["error"]["message"].startswith(f"{field}: ")
    assert AgentVersion.objects.filter(agent=agent).count() == 1


def test_agent_update_refuses_what_the_configuration_rules_refuse(api, agent):
    answer = api.patch(f"/agents/{agent.public_id}", {"memorySettings": {"privacyUrl": "ftp://acme.test/p"}})
    assert (answer.status, answer.code, answer.body["error"]["field"]) == (
        400,
        "invalid_config",
        "memorySettings.privacyUrl",
    )
    answer = api.patch(f"/agents/{agent.public_id}", {"actions": [{"name": "Renew Plan"}]})
    assert (answer.status, answer.code) == (400, "invalid_config")
    assert AgentVersion.objects.filter(agent=agent).count() == 1


def test_memory_cannot_be_turned_on_below_the_team_plan(db):
    team, _ = make_team("smallco", plan=Plan.PRO)
    agent = services.agent_create(team=team, name="Helper")
    answer = api_in_process(team).patch(f"/agents/{agent.public_id}", {"memorySettings": {"on": True}})
    assert (answer.status, answer.code, answer.body["error"]["field"]) == (403, "plan_required", "memorySettings.on")
    assert AgentVersion.objects.filter(agent=agent).count() == 1


def test_delete_agent_removes_every_memory_on_it(api, agent):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    chat_record.message_record(conversation=conversation, kind="user", text="Hi")
    memory_set(end_user=conversation.end_user, text="Prefers email over phone.")
    other = services.agent_create(team=agent.team, name="Other", config={"memorySettings": {"on": True}})
    memory_set(end_user=services.end_user_get_or_create(agent=other, external_id="u_1"), text="Likes tea.")
    answer = api.delete(f"/agents/{agent.public_id}")
    assert answer.status == 204 and answer.body is None
    assert not Agent.objects.filter(pk=agent.pk).exists()
    assert (
        not Memory.objects.filter(agent_id=agent.pk).exists()
        and not Conversation.objects.filter(agent_id=agent.pk).exists()
    )
    assert Memory.objects.get(agent=other).text == "Likes tea."
    assert api.get(f"/agents/{agent.public_id}").code == "agent_not_found"


def test_versions_list_newest_first_and_pages(api, agent):
    for minutes in (5, 30, 60):
        services.agent_update(agent=agent, changes={"memorySettings": {"quietMinutes": minutes}})
    first = api.get(f"/agents/{agent.public_id}/versions?limit=2")
    assert first.status == 200
    assert [v["number"] for v in first.body["versions"]] == [4, 3]
    assert first.body["versions"][0]["config"]["memorySettings"]["quietMinutes"] == 60
    assert first.body["versions"][0]["source"] == "api"
    assert first.body["next"] == {"before": 3}
    second = api.get(f"/agents/{agent.public_id}/versions?limit=2&before=3")
    assert [v["number"] for v in second.body["versions"]] == [2, 1] and second.body["next"] is None
    for query in ("limit=0", "limit=201", "limit=x", "before=0", "page=2", "limit=2&limit=3"):
        answer = api.get(f"/agents/{agent.public_id}/versions?{query}")
        assert (answer.status, answer.code) == (400, "invalid_request"), query
        assert answer.body["error"]["field"] in query


# --- Conversations, messages, events --------------------------------------------------------


def test_agent_start_answers_the_conversation_and_whether_memory_is_used(api, agent):
    answer = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_ananya"})
    assert answer.status == 201
    assert answer.body["id"].startswith("conv_") and answer.body["usesMemory"] is True
    assert answer.body["memoryOffReason"] is None and answer.body["endUserId"] == "u_ananya"
    assert answer.body["version"] == 1 and answer.body["agentId"] == agent.public_id
    conversation = Conversation.objects.get(public_id=answer.body["id"])
    assert conversation.uses_memory and conversation.source == "api"


def test_agent_start_with_memory_false_and_in_a_project(api, agent):
    off = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_ananya", "memory": False})
    assert (off.status, off.body["usesMemory"], off.body["memoryOffReason"]) == (201, False, "requested")
    project = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_ananya", "project": "prj_1"})
    assert (project.body["usesMemory"], project.body["memoryOffReason"], project.body["project"]) == (
        False,
        "project",
        "prj_1",
    )


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "endUserId"),
        ({"endUserId": ""}, "endUserId"),
        ({"endUserId": "x" * 201}, "endUserId"),
        ({"endUserId": 42}, "endUserId"),
        ({"endUserId": "u_1", "memory": "false"}, "memory"),
        ({"endUserId": "u_1", "project": "p" * 101}, "project"),
        ({"endUserId": "u_1", "language": "hi"}, "language"),
    ],
)
def test_agent_start_refuses_bad_input_and_starts_nothing(api, agent, body, field):
    answer = api.post(f"/agents/{agent.public_id}/conversations", body)
    assert (answer.status, answer.code, answer.body["error"]["field"]) == (400, "invalid_request", field)
    assert not Conversation.objects.exists()


@pytest.mark.parametrize("end_user_id", ["   ", " u_1", "u_1\n"])
def test_agent_start_refuses_an_end_user_id_that_is_not_normal_and_never_trims_it(api, agent, end_user_id):
    answer = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": end_user_id})
    assert (answer.status, answer.code, answer.body["error"]["field"]) == (400, "end_user_id_not_normal", "endUserId")
    assert not Conversation.objects.exists()


def test_send_a_message_answers_the_agents_reply(api, agent):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    answer = api.post(f"/conversations/{conversation.public_id}/messages", {"text": "Hi! Can I get my receipt?"})
    assert answer.status == 201
    assert answer.body["reply"] and answer.body["conversationId"] == conversation.public_id
    assert answer.body["handledAsRequest"] is False
    kinds = list(conversation.messages.values_list("kind", "text"))
    assert kinds == [("user", "Hi! Can I get my receipt?"), ("agent", answer.body["reply"])]
    conversation.refresh_from_db()
    assert conversation.memory_due_at is not None  # the quiet window started


def test_send_refuses_empty_and_oversized_messages(api, agent):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    path = f"/conversations/{conversation.public_id}/messages"
    empty = api.post(path, {"text": "   "})
    assert (empty.status, empty.code, empty.body["error"]["field"]) == (400, "invalid_message", "text")
    long = api.post(path, {"text": "x" * 4001})
    assert (long.status, long.code) == (413, "message_too_long")
    wrong = api.post(path, {"text": ["Hi"]})
    assert (wrong.status, wrong.code, wrong.body["error"]["field"]) == (400, "invalid_request", "text")
    assert not Message.objects.exists()


def test_a_model_failure_answers_502_and_records_nothing(api, agent, openai_engine):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    openai_engine.script.append({"status": 500, "body": {"error": {"message": "boom"}}})
    answer = api.post(f"/conversations/{conversation.public_id}/messages", {"text": "Hi"})
    assert (answer.status, answer.code) == (502, "model_error")
    assert not Message.objects.exists()
    openai_engine.script.append(chat_text("Hello!"))
    assert api.post(f"/conversations/{conversation.public_id}/messages", {"text": "Hi"}).body["reply"] == "Hello!"


@pytest.mark.parametrize("no_length", [False, True], ids=["declared", "streamed"])
def test_a_1mb_model_reply_is_refused_before_it_is_read_whole_and_nothing_is_stored(
    api, agent, openai_engine, no_length
):
    """Whether the server declares the size or streams it without one, a reply over
    MODEL_ANSWER_MAX_BYTES is a 502 and no message is kept (the reply, nor the person's turn)."""
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    huge = "All good. " * 100_000  # 1 MB of reply text
    openai_engine.script.append({**chat_text(huge), "no_length": no_length})
    answer = api.post(f"/conversations/{conversation.public_id}/messages", {"text": "Hi"})
    assert (answer.status, answer.code) == (502, "model_too_large")
    assert "over 65536 bytes" in answer.body["error"]["message"]
    assert not Message.objects.exists()
    assert len(openai_engine.requests) == 1  # refused, not retried


def test_record_an_action_and_context_events(api, agent):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    path = f"/conversations/{conversation.public_id}/events"
    action = api.post(path, {"type": "action", "name": "renew_plan", "status": "succeeded"})
    assert (action.status, action.body["type"]) == (201, "action") and action.body["recordedAt"]
    assert list(ActionRun.objects.values_list("name", "status")) == [("renew_plan", "succeeded")]
    for kind in ("tool_result", "file", "web_page"):
        answer = api.post(path, {"type": kind, "text": f"some {kind}"})
        assert (answer.status, answer.body["type"]) == (201, kind)
    assert sorted(Message.objects.values_list("kind", flat=True)) == ["file", "tool_result", "web_page"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"type": "user", "text": "I am the admin"}, "type"),
        ({"type": "agent", "text": "x"}, "type"),
        ({}, "type"),
        ({"type": "action", "name": "renew_plan"}, "status"),
        ({"type": "action", "name": "renew_plan", "status": "done"}, "status"),
        ({"type": "action", "name": "Renew Plan!", "status": "succeeded"}, "name"),
        ({"type": "action", "name": "renew_plan", "status": "succeeded", "text": "x"}, "text"),
        ({"type": "tool_result"}, "text"),
        ({"type": "file", "text": "x", "status": "succeeded"}, "status"),
        ({"type": "web_page", "text": "x" * 50_001}, "text"),
    ],
)
def test_record_refuses_bad_events_and_records_nothing(api, agent, body, field):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    answer = api.post(f"/conversations/{conversation.public_id}/events", body)
    assert (answer.status, answer.code, answer.body["error"]["field"]) == (400, "invalid_request", field)
    assert not Message.objects.exists() and not ActionRun.objects.exists()


def test_missing_agent_and_conversation_answer_404_with_their_code(api):
    assert (api.get("/agents/agt_000000000000").status, api.get("/agents/agt_000000000000").code) == (
        404,
        "agent_not_found",
    )
    answer = api.post("/conversations/conv_0000000000000000/messages", {"text": "Hi"})
    assert (answer.status, answer.code) == (404, "conversation_not_found")
    for path in ("/nothing/here", "/nothing%0Ahere", "/agents/a/b/c"):
        answer = api.get(path)
        assert (answer.status, answer.code) == (404, "not_found"), path
        assert answer.headers["content-type"] == "application/json"


# --- Keys, the request's shape, throttling ---------------------------------------------------


def check_keys_answer_401(team, agent, client):
    path = f"/agents/{agent.public_id}"
    none = client(None).get(path)
    assert (none.status, none.code) == (401, "not_authenticated")
    assert none.headers.get("www-authenticate") == "Bearer"
    wrong = client("ank_not-a-real-key").get(path)
    assert (wrong.status, wrong.code) == (401, "invalid_api_key")
    basic = client(None).get(path, headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert (basic.status, basic.code) == (401, "invalid_api_key")
    key, raw = services.api_key_create(team=team, name="ci")
    assert client(raw).get(path).status == 200
    services.api_key_revoke(key=key)
    revoked = client(raw).get(path)
    assert (revoked.status, revoked.code) == (401, "invalid_api_key")


def test_no_key_a_wrong_key_and_a_revoked_key_answer_401(team, agent):
    check_keys_answer_401(team, agent, InProcessApi)


@pytest.mark.django_db(transaction=True)
def test_over_http_no_key_a_wrong_key_and_a_revoked_key_answer_401(live_server, team, agent):
    """The smoke case: the Authorization header and WWW-Authenticate through a real HTTP server."""
    check_keys_answer_401(team, agent, lambda key: Api(live_server.url + "/api/v1", key))


def test_a_key_is_stored_hashed_and_its_last_use_recorded(team, agent):
    key, raw = services.api_key_create(team=team, name="ci")
    assert ApiKey.objects.get(pk=key.pk).last_used_at is None
    InProcessApi(raw).get(f"/agents/{agent.public_id}")
    stored = ApiKey.objects.get(pk=key.pk)
    assert stored.last_used_at is not None
    assert raw not in {stored.hashed_key, stored.prefix} and len(stored.hashed_key) == 64


def test_requests_past_the_rate_answer_429_with_retry_after_per_key(team, agent, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"api_key": "3/hour"}}
    first, second = api_in_process(team), api_in_process(team)
    path = f"/agents/{agent.public_id}"
    assert [first.get(path).status for _ in range(3)] == [200, 200, 200]
    limited = first.get(path)
    assert (limited.status, limited.code) == (429, "rate_limited")
    assert int(limited.headers["retry-after"]) > 0
    assert second.get(path).status == 200  # the limit is per key


def test_bodies_must_be_json(api, agent):
    path = f"/agents/{agent.public_id}"
    broken = api.call("PATCH", path, raw=b"{not json")
    assert (broken.status, broken.code) == (400, "invalid_json")
    form = api.call("PATCH", path, raw=b"a=b", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert (form.status, form.code) == (415, "unsupported_media_type")
    listed = api.patch(path, [1, 2])
    assert (listed.status, listed.code) == (400, "invalid_request")
    assert "Expected a dictionary" in listed.body["error"]["message"]
    assert api.call("PUT", path, {}).code == "method_not_allowed"
    assert api.get(path, headers={"Accept": "text/html"}).code == "not_acceptable"
    assert AgentVersion.objects.filter(agent=agent).count() == 1


def test_the_builder_endpoint_drafts_a_change_that_waits_for_publish(api, agent):
    pytest.importorskip(
        "memory.tools.builder", reason="the Builder (memory/tools/builder.py) is another issue's and not here yet"
    )
    answer = api.post(
        f"/agents/{agent.public_id}/builder", {"message": "keep which office they work from, and ask first"}
    )
    assert answer.status == 201, answer.body
    assert "ask first on" in answer.body["changes"] and isinstance(answer.body["reply"], str)
    assert answer.body["draft"]["memorySettings"]["askFirst"] is True
    assert agent.draft.config["memorySettings"]["askFirst"] is True
    assert AgentVersion.objects.filter(agent=agent).count() == 1  # a draft, not a version
    refused = api.post(f"/agents/{agent.public_id}/builder", {"message": "quiet minutes 7"})
    assert refused.status == 201 and refused.body["changes"] == [] and "Nothing changed." in refused.body["reply"]
    for bad in ({"message": "   "}, {"message": "x" * 2001}, {"text": "hi"}):
        answer = api.post(f"/agents/{agent.public_id}/builder", bad)
        assert (answer.status, answer.code) == (400, "invalid_request"), bad


def test_ids_with_nul_are_not_found_never_a_server_error(api):
    # PostgreSQL cannot hold NUL in text: such an id names nothing.
    assert (api.get("/agents/agt_%00").status, api.get("/agents/agt_%00").code) == (404, "agent_not_found")
    answer = api.post("/conversations/conv_%00/messages", {"text": "Hi"})
    assert (answer.status, answer.code) == (404, "conversation_not_found")
    answer = api.post("/conversations/conv_%00/events", {"type": "file", "text": "x"})
    assert (answer.status, answer.code) == (404, "conversation_not_found")
