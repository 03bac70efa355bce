"""The website chat's public endpoints (R24-R27): signed visitor ids, a site's signed-in users,
starting chats, sending messages, the switch, resuming, CORS, and the script itself."""

import io
import json
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents import services as agent_services
from agents.models import Conversation, EndUser, Message
from memory.models import Memory
from memory.store.services import memory_set
from memory.writer.sweep import memory_sweep
from surfaces.embed.services import embed_chat_start, end_user_hash, visitor_id_issue, visitor_id_verify


@pytest.fixture(autouse=True)
def fresh_rate_counts():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def client():
    return Client()


def post(client, path, body=None, **extra):
    return client.post(path, data=json.dumps(body or {}), content_type="application/json", **extra)


def start(client, agent, extra=None, **body):
    return post(client, f"/embed/v1/agents/{agent.public_id}/start", body, **(extra or {}))


def send(client, conversation, text):
    return post(
        client, f"/embed/v1/conversations/{conversation['id']}/messages", {"token": conversation["token"], "text": text}
    )


# --- The script and the agent's config -------------------------------------------------------


def test_the_script_is_served_at_embed_v1_js(client):
    response = client.get("/embed/v1.js")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    body = b"".join(response.streaming_content).decode()
    assert "data-agent-id" in body and "AgentNava" in body and "attachShadow" in body


def test_config_gives_the_notice_the_line_and_the_settings(client, agent):
    agent_services.agent_update(
        agent=agent, changes={"memorySettings": {"privacyUrl": "https://example.com/privacy", "keepForDays": 60}}
    )
    data = client.get(f"/embed/v1/agents/{agent.public_id}/config").json()["agent"]
    memory = data["memory"]
    assert data["name"] == "Support" and memory["available"] is True
    assert memory["line"] == "This assistant remembers chats."
    assert "remembers details from your chats to help you next time" in memory["notice"]
    assert "60 days after your last chat" in memory["notice"] and '"stop remembering me"' in memory["notice"]
    assert memory["privacyUrl"] == "https://example.com/privacy"
    assert memory["showSwitch"] is True and memory["askFirst"] is False


def test_config_says_memory_is_unavailable_when_it_is_off(client, agent):
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"on": False}})
    memory = client.get(f"/embed/v1/agents/{agent.public_id}/config").json()["agent"]["memory"]
    assert memory["available"] is False and memory["line"] == "" and memory["notice"] == ""


def test_an_unknown_agent_is_not_found(client, db):
    response = client.get("/embed/v1/agents/agt_000000000000/config")
    assert response.status_code == 404 and response.json()["error"]["code"] == "agent_not_found"


# --- Visitor ids (R24) -------------------------------------------------------------------------


def test_a_visitor_gets_a_signed_id_and_keeps_it(client, agent):
    first = start(client, agent).json()
    visitor_id = first["visitorId"]
    assert visitor_id.startswith("visitor_") and ":" in visitor_id and not first["visitorIdReplaced"]
    external_id = visitor_id_verify(agent, visitor_id)
    assert EndUser.objects.filter(agent=agent, external_id=external_id).exists()
    again = start(client, agent, visitorId=visitor_id).json()
    assert again["visitorId"] == visitor_id and not again["visitorIdReplaced"]
    assert Conversation.objects.filter(end_user__external_id=external_id).count() == 2


@pytest.mark.parametrize("tamper", ["unsigned", "changed_signature", "someone_elses_value", "other_agent", "garbage"])
def test_a_tampered_visitor_id_is_refused_and_replaced(client, agent, team, tamper):
    victim = visitor_id_issue(agent)
    victim_external = visitor_id_verify(agent, victim)
    mine = visitor_id_issue(agent)
    value, signature = mine.rsplit(":", 1)  # value:timestamp, signature
    other_agent = agent_services.agent_create(team=team, name="Sales")
    forged = {
        "unsigned": victim_external,
        "changed_signature": f"{value}:{signature[:-2]}{'AA' if signature[-2:] != 'AA' else 'BB'}",
        "someone_elses_value": f"{victim_external}:{signature}",
        "other_agent": visitor_id_issue(other_agent),
        "garbage": "x" * 500,
    }[tamper]
    data = start(client, agent, visitorId=forged).json()
    assert data["visitorIdReplaced"] is True
    fresh = visitor_id_verify(agent, data["visitorId"])
    assert fresh not in (None, victim_external, visitor_id_verify(agent, mine))
    conversation = Conversation.objects.get(public_id=data["conversation"]["id"])
    assert conversation.end_user.external_id == fresh
    assert not EndUser.objects.filter(external_id__in=[victim_external, forged]).exists()


def test_a_site_user_is_identified_by_id_and_hash(client, agent):
    good = start(client, agent, endUserId="u_ananya", endUserHash=end_user_hash(agent, "u_ananya")).json()
    assert good["visitorId"] is None
    assert Conversation.objects.get(public_id=good["conversation"]["id"]).end_user.external_id == "u_ananya"


@pytest.mark.parametrize("bad_hash", [None, "", "00" * 32, "not-hex"])
def test_a_wrong_hash_is_refused_and_creates_nothing(client, agent, bad_hash):
    response = start(client, agent, endUserId="u_ravi", endUserHash=bad_hash)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "invalid_end_user_hash"
    assert not EndUser.objects.exists() and not Conversation.objects.exists()
    # Another user's hash does not open this one either.
    other = start(client, agent, endUserId="u_ravi", endUserHash=end_user_hash(agent, "u_ananya"))
    assert other.status_code == 403


# --- Starting chats and memory (R20, R25, R26) -----------------------------------------------


def test_a_returning_visitor_is_greeted_from_the_memory(client, agent):
    first = start(client, agent).json()
    assert (
        send(
            client, first["conversation"], "Please email me rather than calling, I prefer email over phone."
        ).status_code
        == 200
    )
    memory_sweep(now=timezone.now() + timedelta(minutes=16), run_inline=True)
    end_user = EndUser.objects.get(external_id=visitor_id_verify(agent, first["visitorId"]))
    assert Memory.objects.get(end_user=end_user).lines == ["Prefers email over phone."]
    later = start(client, agent, visitorId=first["visitorId"]).json()  # Start over, or the next day
    reply = send(client, later["conversation"], "Hi! Can I get my receipt?").json()["reply"]["text"]
    assert "Hi again" in reply and "email you the receipt" in reply


def test_data_memory_off_starts_without_memory_until_the_site_says_yes(client, agent):
    off = start(client, agent, memory=False).json()
    assert off["conversation"]["memory"] == {
        "used": False,
        "reason": "requested",
        "line": "Memory is off for this chat.",
        "switchable": False,
    }
    consent = post(
        client,
        f"/embed/v1/agents/{agent.public_id}/consent",
        {"visitorId": off["visitorId"], "agreed": True, "source": "site_step"},
    ).json()["consent"]
    assert consent["agreedAt"] and consent["source"] == "site_step"
    on = start(client, agent, visitorId=off["visitorId"], memory=True).json()
    assert on["conversation"]["memory"]["used"] is True
    assert on["conversation"]["memory"]["line"] == "This assistant remembers chats."


def test_ask_first_asks_before_any_chat_and_a_yes_turns_memory_on(client, agent):
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"askFirst": True}})
    asked = start(client, agent).json()
    assert asked["ask"] is True and asked["conversation"] is None
    assert asked["agent"]["memory"]["askFirstQuestion"].startswith("Can this assistant remember details")
    assert not Conversation.objects.exists()
    yes = post(
        client, f"/embed/v1/agents/{agent.public_id}/consent", {"visitorId": asked["visitorId"], "agreed": True}
    ).json()
    assert yes["consent"]["agreedAt"] and yes["consent"]["source"] == "chat_prompt"
    chat = start(client, agent, visitorId=asked["visitorId"]).json()
    assert chat["ask"] is False and chat["conversation"]["memory"]["used"] is True


def test_ask_first_a_no_keeps_memory_off_and_is_not_asked_again(client, agent):
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"askFirst": True}})
    asked = start(client, agent).json()
    no = post(
        client, f"/embed/v1/agents/{agent.public_id}/consent", {"visitorId": asked["visitorId"], "agreed": False}
    ).json()
    assert no["consent"]["agreedAt"] is None and no["consent"]["declinedAt"]
    for _ in range(2):
        chat = start(client, agent, visitorId=asked["visitorId"]).json()
        assert chat["ask"] is False
        assert chat["conversation"]["memory"] == {
            "used": False,
            "reason": "consent",
            "line": "Memory is off: you said no.",
            "switchable": False,
        }


def test_the_start_service_decides_ask_first_once_and_starts_only_after_an_answer(agent):
    """embed_chat_start is the start's one rule: with askFirst and no answer, no chat; after a yes,
    a chat with memory; the switch counts only where it is shown."""
    from consent.services import consent_set

    agent_services.agent_update(agent=agent, changes={"memorySettings": {"askFirst": True, "showSwitch": False}})
    asked = embed_chat_start(agent=agent, external_id="visitor_a", memory=True, switch_on=True)
    assert asked.ask and asked.conversation is None and not Conversation.objects.exists()
    consent_set(end_user=asked.end_user, agreed=True, source="chat_prompt")
    started = embed_chat_start(agent=agent, external_id="visitor_a", memory=True, switch_on=False)  # no switch shown
    assert not started.ask and started.conversation.uses_memory and started.end_user == asked.end_user


def test_a_start_looks_the_end_user_up_once(client, agent):
    visitor = start(client, agent).json()["visitorId"]
    with CaptureQueriesContext(connection) as captured:
        assert start(client, agent, visitorId=visitor).json()["conversation"]["memory"]["used"] is True
    end_user_reads = [
        q["sql"]
        for q in captured.captured_queries
        if q["sql"].startswith("SELECT") and 'FROM "agents_enduser"' in q["sql"]
    ]
    assert len(end_user_reads) == 1, end_user_reads


def test_a_consent_answer_with_a_bad_source_or_value_is_refused(client, agent):
    visitor = start(client, agent).json()["visitorId"]
    for body, field in (({"agreed": "yes"}, "agreed"), ({"agreed": True, "source": "api"}, "source")):
        response = post(client, f"/embed/v1/agents/{agent.public_id}/consent", {"visitorId": visitor, **body})
        assert response.status_code == 400 and response.json()["error"]["field"] == field
    from consent.models import Consent

    assert not Consent.objects.exists()


def test_the_switch_off_at_start_and_during_a_chat(client, agent):
    off = start(client, agent, switch=False).json()["conversation"]
    assert off["memory"]["reason"] == "switch" and off["memory"]["used"] is False
    chat = start(client, agent).json()
    conversation = chat["conversation"]
    send(client, conversation, "I work from the Pune office.")
    switched = post(
        client, f"/embed/v1/conversations/{conversation['id']}/switch", {"token": conversation["token"], "on": False}
    ).json()
    assert switched["conversation"]["memory"]["used"] is False
    assert switched["conversation"]["memory"]["line"] == "Memory is off for this chat."
    stored = Conversation.objects.get(public_id=conversation["id"])
    assert (stored.uses_memory, stored.memory_off_reason, stored.memory_note, stored.memory_due_at) == (
        False,
        "switch",
        "",
        None,
    )
    # Nothing said in it is read into the memory, not even what came before the switch.
    memory_sweep(now=timezone.now() + timedelta(hours=2), run_inline=True)
    assert not Memory.objects.filter(end_user=stored.end_user).exclude(text="").exists()
    # Back on only in a new chat.
    again = post(
        client, f"/embed/v1/conversations/{conversation['id']}/switch", {"token": conversation["token"], "on": True}
    )
    assert again.status_code == 400 and again.json()["error"]["code"] == "switch_on_next_chat"


def test_without_show_switch_there_is_no_switch(client, agent):
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"showSwitch": False}})
    chat = start(client, agent, switch=False).json()["conversation"]
    assert chat["memory"]["used"] is True  # no switch is shown, so none can be off
    response = post(client, f"/embed/v1/conversations/{chat['id']}/switch", {"token": chat["token"], "on": False})
    assert response.status_code == 403
    assert Conversation.objects.get(public_id=chat["id"]).uses_memory


# --- Sending ---------------------------------------------------------------------------------


def test_send_a_message_and_get_the_reply(client, agent):
    chat = start(client, agent).json()["conversation"]
    data = send(client, chat, "Hi, I need my invoice").json()
    assert data["message"] == {"role": "user", "text": "Hi, I need my invoice", "at": data["message"]["at"]}
    assert data["reply"]["role"] == "agent" and "receipt" in data["reply"]["text"]
    assert data["conversation"]["hasMessages"] is True
    assert list(Message.objects.values_list("kind", flat=True)) == ["user", "agent"]


def test_a_wrong_token_is_not_found_and_records_nothing(client, agent):
    chat = start(client, agent).json()["conversation"]
    for token in ("", "x" * 43, None, start(client, agent).json()["conversation"]["token"]):
        response = send(client, {"id": chat["id"], "token": token}, "hello")
        assert response.status_code == 404 and response.json()["error"]["code"] == "conversation_not_found"
    assert not Message.objects.exists()


def test_stop_remembering_me_through_the_website_chat(client, agent):
    chat = start(client, agent).json()
    end_user = EndUser.objects.get(external_id=visitor_id_verify(agent, chat["visitorId"]))
    memory_set(end_user=end_user, text="Prefers email over phone.")
    data = send(client, chat["conversation"], "stop remembering me").json()
    assert data["handledAsRequest"] is True and "forgotten" in data["reply"]["text"]
    assert data["endUser"]["memory"]["stopped"] is True
    assert data["conversation"]["memory"]["line"] == "This assistant no longer remembers you."
    assert start(client, agent, visitorId=chat["visitorId"]).json()["conversation"]["memory"]["reason"] == "stopped"


@pytest.mark.parametrize(
    "body, status, code",
    [
        ({"text": "x" * 4001}, 413, "message_too_long"),
        ({"text": "   "}, 400, "invalid_message"),
        ({"text": ["a list"]}, 400, "invalid_message"),
        ({"text": "ok", "padding": "y" * 17000}, 413, "request_too_large"),
    ],
)
def test_size_limits_refuse_and_record_nothing(client, agent, body, status, code):
    chat = start(client, agent).json()["conversation"]
    response = post(client, f"/embed/v1/conversations/{chat['id']}/messages", {"token": chat["token"], **body})
    assert response.status_code == status and response.json()["error"]["code"] == code
    assert not Message.objects.exists()


def test_a_body_that_is_not_json_is_refused(client, agent):
    response = client.post(
        f"/embed/v1/agents/{agent.public_id}/start", data=b"not json", content_type="application/json"
    )
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_json"
    assert not EndUser.objects.exists()


def test_a_model_failure_records_nothing(client, agent, openai_engine):
    chat = start(client, agent).json()["conversation"]
    openai_engine.default = {"status": 500, "body": {"error": {"message": "down"}}}
    response = send(client, chat, "hello")
    assert response.status_code == 502 and "error" in response.json()
    assert not Message.objects.exists()


# --- Rate limits (R7 of the issue) -----------------------------------------------------------


def test_messages_per_visitor_are_limited_and_a_refused_one_changes_nothing(client, agent, settings):
    settings.EMBED_RATE_LIMITS = {"visitor_messages": (2, 3600)}
    chat = start(client, agent).json()["conversation"]
    assert send(client, chat, "one").status_code == 200
    assert send(client, chat, "two").status_code == 200
    refused = send(client, chat, "three")
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "rate_limited" and "at most 2 in 3600 seconds" in error["message"]
    assert 1 <= int(refused["Retry-After"]) <= 3600
    assert refused["Access-Control-Allow-Origin"] == "*"
    assert list(Message.objects.filter(kind="user").values_list("text", flat=True)) == ["one", "two"]
    stored = Conversation.objects.get(public_id=chat["id"])
    assert stored.last_activity_at == Message.objects.order_by("-created_at").first().created_at
    # Another visitor on the same agent is not held back by this one.
    other = start(client, agent).json()["conversation"]
    assert send(client, other, "hello").status_code == 200


def test_messages_per_agent_are_limited_across_visitors(client, agent, settings):
    settings.EMBED_RATE_LIMITS = {"agent_messages": (3, 3600)}
    chats = [start(client, agent).json()["conversation"] for _ in range(4)]
    assert [send(client, chat, "hi").status_code for chat in chats] == [200, 200, 200, 429]
    assert "This assistant is receiving too many messages" in send(client, chats[3], "hi").json()["error"]["message"]
    assert Message.objects.filter(conversation__public_id=chats[3]["id"]).count() == 0


def test_new_visitor_ids_per_address_and_requests_per_visitor_are_limited(client, agent, settings):
    settings.EMBED_RATE_LIMITS = {"ip_new_visitors": (2, 3600), "visitor_requests": (3, 3600)}
    address = {"REMOTE_ADDR": "10.0.0.1"}
    assert start(client, agent, address).status_code == 200
    visitor = start(client, agent, address).json()["visitorId"]
    refused = start(client, agent, address)
    assert refused.status_code == 429 and "Too many new chats from this address" in refused.json()["error"]["message"]
    assert EndUser.objects.count() == 2
    assert start(client, agent, {"REMOTE_ADDR": "10.0.0.2"}).status_code == 200  # another address
    # A known visitor is not a new one; past its own request limit it is refused too.
    assert start(client, agent, visitorId=visitor).status_code == 200
    assert start(client, agent, visitorId=visitor).status_code == 200
    assert start(client, agent, visitorId=visitor).status_code == 429
    assert Conversation.objects.count() == 5


# --- Resuming after a reload -----------------------------------------------------------------


def test_the_same_visitor_can_resume_a_chat_and_nobody_else_can(client, agent):
    chat = start(client, agent).json()
    send(client, chat["conversation"], "Hi, I need my invoice")
    path = f"/embed/v1/conversations/{chat['conversation']['id']}/transcript"
    resumed = post(client, path, {"token": chat["conversation"]["token"], "visitorId": chat["visitorId"]}).json()
    assert [m["role"] for m in resumed["messages"]] == ["user", "agent"]
    assert resumed["messages"][0]["text"] == "Hi, I need my invoice"
    someone_else = start(client, agent).json()["visitorId"]
    for visitor in (someone_else, None, "tampered:id"):
        response = post(client, path, {"token": chat["conversation"]["token"], "visitorId": visitor})
        assert response.status_code == 404


# --- CORS, for a script on someone else's site ---------------------------------------------


def test_preflight_and_responses_allow_any_origin(client, agent):
    preflight = client.options(
        f"/embed/v1/agents/{agent.public_id}/start",
        HTTP_ORIGIN="https://shop.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type",
    )
    assert preflight.status_code == 204
    assert preflight["Access-Control-Allow-Origin"] == "*"
    assert "POST" in preflight["Access-Control-Allow-Methods"]
    assert preflight["Access-Control-Allow-Headers"].lower() == "content-type"
    assert not EndUser.objects.exists()
    response = start(client, agent, {"HTTP_ORIGIN": "https://shop.example"})
    assert response["Access-Control-Allow-Origin"] == "*" and response["Cache-Control"] == "no-store"
    wrong_method = client.get(f"/embed/v1/agents/{agent.public_id}/start")
    assert wrong_method.status_code == 405 and wrong_method.json()["error"]["code"] == "method_not_allowed"


# --- The demo page ---------------------------------------------------------------------------


def test_the_demo_page_embeds_the_demo_agent(client, db, settings):
    settings.DEMO = True
    missing = client.get("/demo/chat/")
    assert missing.status_code == 404 and b"seed_demo" in missing.content
    from django.core.management import call_command

    call_command("seed_demo", "--force", stdout=io.StringIO())
    from agents.models import Agent

    demo = Agent.objects.get(team__slug="demo", name="Support")
    page = client.get("/demo/chat/").content.decode()
    assert '<script src="/embed/v1.js"' in page and f'data-agent-id="{demo.public_id}"' in page
    assert "data-end-user-id" not in page.split('<script src="/embed/v1.js"')[1]
    signed_in = client.get("/demo/chat/?user=u_ananya").content.decode()
    assert f'data-end-user-hash="{end_user_hash(demo, "u_ananya")}"' in signed_in
    assert 'data-end-user-id="u_nobody"' not in client.get("/demo/chat/?user=u_nobody").content.decode()
    assert 'data-memory="off"' in client.get("/demo/chat/?memory=off").content.decode()
