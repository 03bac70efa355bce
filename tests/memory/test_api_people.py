"""The people an agent has met, their conversations, the export and the team-wide erase:
in-process (DRF's client) for the answers, one live-server case per new path family."""

from datetime import timedelta
from urllib.parse import quote

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from agents import services as agent_services
from agents.models import Conversation, EndUser, Message
from consent.models import Consent
from consent.services import consent_set
from memory.models import Memory
from memory.store import services
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start
from tests.api_helpers import api_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(team):
    return agent_services.api_key_create(team=team, name="tests")[1]


def call(method, path, key, data=None):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return getattr(client, method)(f"/api/v1{path}", data=data, format="json")


def chat(agent, external_id, texts, *, memory=True, at=None):
    at = at or timezone.now() - timedelta(hours=1)
    conversation = chat_start.conversation_start(agent=agent, external_id=external_id, memory=memory, now=at)
    for i, text in enumerate(texts):
        chat_record.message_record(conversation=conversation, kind="user", text=text, now=at + timedelta(seconds=i + 1))
    return conversation


# --- The list ---------------------------------------------------------------------------------


def test_the_list_has_everyone_met_with_or_without_a_memory(agent, key):
    chat(agent, "u_chat_only", ["Hello."])
    services.memory_set(
        end_user=agent_services.end_user_get_or_create(agent=agent, external_id="u_kept"), text="Likes tea."
    )
    stopped = agent_services.end_user_get_or_create(agent=agent, external_id="u_stopped")
    services.memory_stop(end_user=stopped)
    consent_set(end_user=stopped, agreed=True, source="api")
    body = call("get", f"/agents/{agent.public_id}/end-users", key).json()
    people = {p["endUserId"]: p for p in body["endUsers"]}
    assert [p["endUserId"] for p in body["endUsers"]] == ["u_stopped", "u_kept", "u_chat_only"]
    assert body["next"] is None
    assert people["u_chat_only"]["hasMemory"] is False and people["u_chat_only"]["text"] == ""
    assert people["u_chat_only"]["conversations"] == 1 and people["u_chat_only"]["lastChatAt"]
    assert people["u_chat_only"]["updatedAt"] is None
    assert people["u_kept"]["hasMemory"] is True and people["u_kept"]["text"] == "Likes tea."
    assert people["u_stopped"]["stopped"] is True and people["u_stopped"]["hasMemory"] is True
    assert people["u_stopped"]["agreedAt"] is not None and people["u_stopped"]["stoppedAt"] is not None
    assert set(people["u_kept"]) == {
        "endUserId",
        "firstSeenAt",
        "hasMemory",
        "text",
        "stopped",
        "updatedAt",
        "readUpTo",
        "lastRun",
        "stoppedAt",
        "agreedAt",
        "lastChatAt",
        "conversations",
    }


def test_q_matches_the_id_prefix_and_paging_sees_everyone_once(agent, key):
    at = timezone.now()
    for i in range(7):
        end_user = agent_services.end_user_get_or_create(agent=agent, external_id=f"{'cust' if i % 2 else 'lead'}_{i}")
        EndUser.objects.filter(pk=end_user.pk).update(created_at=at - timedelta(seconds=i // 3))  # ties
    base = f"/agents/{agent.public_id}/end-users"
    assert {p["endUserId"] for p in call("get", f"{base}?q=cust_", key).json()["endUsers"]} == {
        "cust_1",
        "cust_3",
        "cust_5",
    }
    assert call("get", f"{base}?q=CUST", key).json()["endUsers"] == []
    seen, cursor = [], None
    while True:
        page = call("get", f"{base}?limit=2" + (f"&cursor={cursor}" if cursor else ""), key).json()
        seen += [p["endUserId"] for p in page["endUsers"]]
        if not page["next"]:
            break
        cursor = page["next"]["cursor"]
    assert sorted(seen) == sorted(EndUser.objects.values_list("external_id", flat=True)) and len(seen) == 7
    assert call("get", f"{base}?limit=0", key).status_code == 400
    assert call("get", f"{base}?sort=name", key).json()["error"]["field"] == "sort"


# --- Conversations ----------------------------------------------------------------------------


def test_their_conversations_newest_first_and_404_for_someone_never_met(agent, key):
    first = chat(agent, "u_ananya", ["One."], at=timezone.now() - timedelta(days=2))
    second = chat(agent, "u_ananya", ["Two."], memory=False)
    chat(agent, "u_other", ["Not hers."])
    base = f"/agents/{agent.public_id}/end-users/u_ananya/conversations"
    body = call("get", base, key).json()
    assert [c["id"] for c in body["conversations"]] == [second.public_id, first.public_id]
    assert body["conversations"][0]["usesMemory"] is False and body["conversations"][0]["lastActivityAt"]
    one = call("get", f"{base}?limit=1", key).json()
    assert (
        one["next"]
        and call("get", f"{base}?limit=1&cursor={one['next']['cursor']}", key).json()["conversations"][0]["id"]
        == first.public_id
    )
    missing = call("get", f"/agents/{agent.public_id}/end-users/u_nobody/conversations", key)
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "end_user_not_found")


# --- Export -----------------------------------------------------------------------------------


def test_the_export_holds_everything_kept_about_them_on_that_agent(agent, key):
    conversation = chat(agent, "u_ananya", ["I work from the Pune office."])
    chat_record.action_run_record(conversation=conversation, name="renew_plan", status="succeeded")
    chat_record.message_record(conversation=conversation, kind="web_page", text="pricing page")
    end_user = conversation.end_user
    services.memory_set(end_user=end_user, text="Works from the Pune office.")
    consent_set(end_user=end_user, agreed=True, source="api")
    chat(agent, "u_other", ["Someone else."])
    answer = call("get", f"/agents/{agent.public_id}/end-users/u_ananya/export", key)
    assert answer.status_code == 200
    doc = answer.json()
    assert doc["agent"] == {"id": agent.public_id, "name": agent.name}
    assert doc["endUser"]["text"] == "Works from the Pune office." and doc["endUser"]["conversations"] == 1
    assert doc["consent"]["agreedAt"] and doc["consent"]["source"] == "api"
    assert [run["kind"] for run in doc["memoryRuns"]] == ["team_edit"] and doc["memoryRuns"][0]["added"] == 1
    assert "text" not in doc["memoryRuns"][0]
    [exported] = doc["conversations"]
    assert exported["id"] == conversation.public_id
    assert [m["text"] for m in exported["messages"]] == ["I work from the Pune office."]
    assert exported["actions"][0]["name"] == "renew_plan" and exported["events"][0]["text"] == "pricing page"
    assert "Someone else." not in answer.content.decode()
    missing = call("get", f"/agents/{agent.public_id}/end-users/u_nobody/export", key)
    assert missing.json()["error"]["code"] == "end_user_not_found"


# --- The team-wide erase ----------------------------------------------------------------------


def test_team_wide_erase_removes_them_on_every_agent_of_the_team_only(team, agent, key, other_team):
    sales = agent_services.agent_create(team=team, name="Sales", config={"memorySettings": {"on": True}})
    theirs = agent_services.agent_create(team=other_team[0], name="Globex", config={"memorySettings": {"on": True}})
    for each in (agent, sales, theirs):
        conversation = chat(each, "u_ananya", ["Hi.", "Again."])
        services.memory_set(end_user=conversation.end_user, text="Likes tea.\nWorks in Pune.")
        consent_set(end_user=conversation.end_user, agreed=True, source="api")
    chat(agent, "u_bystander", ["Still here."])
    answer = call("delete", "/end-users/u_ananya", key)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["endUserId"] == "u_ananya"
    assert {a["agentId"] for a in body["agents"]} == {agent.public_id, sales.public_id}
    for erased in body["agents"]:
        removed = erased["removed"]
        assert removed["conversations"] == 1 and removed["messages"] == 2 and removed["consents"] == 1
        assert removed["memories"] == 1 and removed["lines"] == 2
    assert list(EndUser.objects.filter(external_id="u_ananya").values_list("agent", flat=True)) == [theirs.pk]
    assert Memory.objects.filter(agent=theirs).count() == 1 and Consent.objects.filter(agent=theirs).count() == 1
    assert EndUser.objects.filter(external_id="u_bystander").exists()
    again = call("delete", "/end-users/u_ananya", key)
    assert (again.status_code, again.json()["error"]["code"]) == (404, "end_user_not_found")
    assert call("get", "/end-users/u_bystander", key).status_code == 405


@pytest.mark.django_db(transaction=True)
def test_over_http_list_export_and_erase_an_id_with_a_slash(live_server, team, agent):
    api = api_for(live_server, team)
    chat(agent, "shop/42", ["Hello."])
    assert [p["endUserId"] for p in api.get(f"/agents/{agent.public_id}/end-users?q=shop%2F").body["endUsers"]] == [
        "shop/42"
    ]
    path = f"/agents/{agent.public_id}/end-users/{quote('shop/42', safe='')}"
    assert api.get(f"{path}/export").body["conversations"][0]["messages"][0]["text"] == "Hello."
    assert api.get(f"{path}/conversations").status == 200
    erased = api.delete(f"/end-users/{quote('shop/42', safe='')}")
    assert erased.status == 200 and erased.body["agents"][0]["agentId"] == agent.public_id
    assert not Conversation.objects.exists() and not Message.objects.exists()


def test_one_memorys_page_offers_the_export_as_a_download(agent, member_client, other_team):
    conversation = chat(agent, "u_ananya", ["I work from the Pune office."])
    services.memory_set(end_user=conversation.end_user, text="Works from the Pune office.")
    page = member_client.get(f"/agents/{agent.public_id}/memory/people/{conversation.end_user.pk}/")
    link = f"/agents/{agent.public_id}/memory/people/{conversation.end_user.pk}/export/"
    assert page.status_code == 200 and link.encode() in page.content
    download = member_client.get(link)
    assert download.status_code == 200
    assert download["Content-Disposition"] == f'attachment; filename="{agent.public_id}-u_ananya.json"'
    document = download.json()
    assert document["endUser"]["text"] == "Works from the Pune office."
    assert document["conversations"][0]["messages"][0]["text"] == "I work from the Pune office."
    # Another team's agent, or someone else's end user id, is a 404.
    theirs = agent_services.agent_create(team=other_team[0], name="Globex")
    other = agent_services.end_user_get_or_create(agent=theirs, external_id="u_x")
    assert member_client.get(f"/agents/{theirs.public_id}/memory/people/{other.pk}/export/").status_code == 404
    assert member_client.get(f"/agents/{agent.public_id}/memory/people/{other.pk}/export/").status_code == 404


def test_the_export_costs_the_same_queries_for_one_conversation_or_many(agent, key, django_assert_max_num_queries):
    for i in range(6):
        chat(agent, "u_many", [f"Message {i}."], at=timezone.now() - timedelta(hours=6 - i))
    # the key generation, key, agent, person, memory, runs, consent, chats: not per chat
    with django_assert_max_num_queries(13):
        doc = call("get", f"/agents/{agent.public_id}/end-users/u_many/export", key).json()
    assert len(doc["conversations"]) == 6 and doc["conversations"][0]["messages"][0]["text"] == "Message 5."
