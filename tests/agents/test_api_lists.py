"""GET/POST /agents and GET /conversations/{id}: in-process (DRF's client) for the answers, one
live-server case for the HTTP path an integrator's code takes."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from agents import services as agent_services
from agents.models import Agent, AgentVersion, Plan
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start
from tests.api_helpers import api_for
from tests.conftest import make_team

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(team):
    return agent_services.api_key_create(team=team, name="tests")[1]


def call(method, path, key, data=None):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return getattr(client, method)(f"/api/v1{path}", data=data, format="json")


def test_create_publishes_version_1_with_the_given_config_and_lists_it_first(team, key, agent):
    answer = call(
        "post",
        "/agents",
        key,
        {"name": "Billing", "instructions": "Help with invoices.", "memorySettings": {"on": True, "quietMinutes": 30}},
    )
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["name"] == "Billing" and body["version"] == 1 and body["instructions"] == "Help with invoices."
    assert body["memorySettings"]["on"] is True and body["memorySettings"]["quietMinutes"] == 30
    assert body["memorySettings"]["notice"]  # memory on, on a plan with memory: the notice to show
    created = Agent.objects.get(public_id=body["id"])
    assert created.team == team
    assert list(AgentVersion.objects.filter(agent=created).values_list("number", "source")) == [(1, "create")]
    listed = call("get", "/agents", key).json()
    assert [a["id"] for a in listed["agents"]] == [body["id"], agent.public_id]
    assert listed["next"] is None
    assert listed["agents"][0] == {**body, "createdAt": listed["agents"][0]["createdAt"]}
    assert call("get", f"/agents/{body['id']}", key).json() == {k: v for k, v in body.items() if k != "createdAt"}


def test_create_refusals_create_nothing(db):
    free, _ = make_team("freeco", plan=Plan.FREE)
    key = agent_services.api_key_create(team=free, name="t")[1]
    for body, code, field in [
        ({"name": "X", "memorySettings": {"on": True}}, "plan_required", None),
        ({"name": "X", "memorySettings": {"quietMinutes": 7}}, "invalid_request", "memorySettings.quietMinutes"),
        ({}, "invalid_request", "name"),
        ({"name": "X", "id": "agt_1"}, "invalid_request", "id"),
        ({"name": "  "}, "invalid_request", "name"),
    ]:
        answer = call("post", "/agents", key, body)
        assert answer.status_code in (400, 403), (body, answer.content)
        assert answer.json()["error"]["code"] == code, (body, answer.content)
        if field:
            assert answer.json()["error"].get("field") == field
    assert not Agent.objects.filter(team=free).exists()


def test_the_list_pages_newest_first_with_before_and_cursor(team, key):
    at = timezone.now()
    made = []
    for i in range(5):
        agent = agent_services.agent_create(team=team, name=f"A{i}")
        Agent.objects.filter(pk=agent.pk).update(created_at=at - timedelta(minutes=i // 2))  # ties in pairs
        made.append(agent.public_id)
    seen, cursor = [], None
    while True:
        page = call("get", "/agents?limit=2" + (f"&cursor={cursor}" if cursor else ""), key).json()
        seen += [a["id"] for a in page["agents"]]
        if page["next"] is None:
            break
        cursor = page["next"]["cursor"]
    assert sorted(seen) == sorted(made) and len(seen) == 5
    by_before = call("get", "/agents", key, {"before": (at - timedelta(seconds=30)).isoformat()}).json()
    assert len(by_before["agents"]) == 3
    bad = call("get", "/agents?cursor=nonsense", key)
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "cursor"
    both = call("get", f"/agents?cursor={cursor}&before={at.isoformat()}", key)
    assert both.status_code == 400


def test_conversation_get_has_messages_actions_and_events_oldest_first(agent, key):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_ananya", memory=False)
    now = timezone.now()
    chat_record.message_record(conversation=conversation, kind="user", text="Renew my plan.", now=now)
    chat_record.message_record(
        conversation=conversation, kind="tool_result", text='{"plan": "pro"}', now=now + timedelta(seconds=1)
    )
    chat_record.action_run_record(
        conversation=conversation, name="renew_plan", status="succeeded", now=now + timedelta(seconds=2)
    )
    chat_record.message_record(conversation=conversation, kind="agent", text="Done.", now=now + timedelta(seconds=3))
    body = call("get", f"/conversations/{conversation.public_id}", key).json()
    assert body["id"] == conversation.public_id and body["endUserId"] == "u_ananya"
    assert body["usesMemory"] is False and body["memoryOffReason"] == "requested"
    assert [(m["role"], m["text"]) for m in body["messages"]] == [("user", "Renew my plan."), ("agent", "Done.")]
    assert [(e["type"], e["text"]) for e in body["events"]] == [("tool_result", '{"plan": "pro"}')]
    assert [(a["name"], a["status"]) for a in body["actions"]] == [("renew_plan", "succeeded")]
    assert call("get", "/conversations/conv_0000000000000000", key).json()["error"]["code"] == "conversation_not_found"


@pytest.mark.django_db(transaction=True)
def test_over_http_an_integrator_finds_its_agent_id_and_reads_a_chat(live_server, team, agent):
    api = api_for(live_server, team)
    agents = api.get("/agents")
    assert agents.status == 200 and [a["id"] for a in agents.body["agents"]] == [agent.public_id]
    started = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_1"}).body
    api.post(f"/conversations/{started['id']}/events", {"type": "file", "text": "invoice.pdf"})
    read = api.get(f"/conversations/{started['id']}")
    assert read.status == 200 and read.body["events"][0]["text"] == "invoice.pdf"
    assert api.post("/agents", {"name": "Sales"}).status == 201
    assert api.get("/agents?limit=1").body["next"] is not None
