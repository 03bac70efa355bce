"""Tenant isolation over every API endpoint: team B's key against team A's agent, end user and
conversation answers 404 exactly as a missing one does, and changes nothing."""

import json

import pytest
from django.contrib.auth import get_user_model

from agents import services as agent_services
from agents.models import (
    ActionRun,
    Agent,
    AgentDraft,
    AgentVersion,
    AuditEvent,
    Conversation,
    EndUser,
    Membership,
    Message,
    UsageDay,
)
from consent.models import Consent
from consent.services import consent_set
from memory.models import Memory, MemoryRun
from memory.store.services import memory_set
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start
from tests.api_helpers import InProcessApi, api_in_process
from webhooks.models import Delivery, Endpoint
from webhooks.services import endpoint_create

User = get_user_model()

pytestmark = pytest.mark.django_db

MISSING_AGENT = "agt_000000000000"
MISSING_CONVERSATION = "conv_0000000000000000"
MISSING_WEBHOOK = "whk_000000000000"

# (method, route as in the schema, body). {agent}, {end_user} and {conversation} are filled in.
MATRIX = [
    ("GET", "/agents/{agent_id}", None),
    ("PATCH", "/agents/{agent_id}", {"memorySettings": {"on": False}}),
    ("DELETE", "/agents/{agent_id}", None),
    ("GET", "/agents/{agent_id}/versions", None),
    ("GET", "/agents/{agent_id}/memories", None),
    ("POST", "/agents/{agent_id}/conversations", {"endUserId": "u_ananya"}),
    ("POST", "/agents/{agent_id}/builder", {"message": "turn off memory"}),
    ("GET", "/agents/{agent_id}/end-users/{end_user_id}/memory", None),
    ("PUT", "/agents/{agent_id}/end-users/{end_user_id}/memory", {"text": "Hijacked."}),
    ("DELETE", "/agents/{agent_id}/end-users/{end_user_id}/memory", None),
    ("POST", "/agents/{agent_id}/end-users/{end_user_id}/memory/stop", {"stop": True}),
    ("POST", "/agents/{agent_id}/end-users/{end_user_id}/consent", {"agreed": False}),
    ("DELETE", "/agents/{agent_id}/end-users/{end_user_id}", None),
    ("GET", "/agents/{agent_id}/end-users", None),
    ("GET", "/agents/{agent_id}/end-users/{end_user_id}/conversations", None),
    ("GET", "/agents/{agent_id}/end-users/{end_user_id}/export", None),
    ("GET", "/conversations/{conversation_id}", None),
    ("POST", "/agents/{agent_id}/try", {"people": 1}),
    ("GET", "/agents/{agent_id}/try/{job_id}", None),
    ("POST", "/agents/{agent_id}/try/{job_id}/cancel", None),
    ("POST", "/agents/{agent_id}/apply", None),
    ("GET", "/agents/{agent_id}/apply/{job_id}", None),
    ("POST", "/agents/{agent_id}/apply/{job_id}/cancel", None),
    ("POST", "/agents/{agent_id}/instruction-check", {"instructions": "Keep their health conditions."}),
    ("GET", "/webhooks/{webhook_id}", None),
    ("PATCH", "/webhooks/{webhook_id}", {"active": False}),
    ("DELETE", "/webhooks/{webhook_id}", None),
    ("POST", "/conversations/{conversation_id}/messages", {"text": "Hi, what do you remember about me?"}),
    (
        "POST",
        "/conversations/{conversation_id}/events",
        {"type": "action", "name": "renew_plan", "status": "succeeded"},
    ),
]

# Operations on the key's team as a whole (no other team's id in the path): team B's key sees and
# changes only team B's rows.
TEAM_WIDE = [
    ("GET", "/agents", None),
    ("POST", "/agents", {"name": "Globex sales"}),
    ("DELETE", "/end-users/{end_user_id}", None),
    ("GET", "/webhooks", None),
    ("POST", "/webhooks", {"url": "https://example.com/hook", "events": ["memory.updated"]}),
    ("GET", "/audit-log", None),
]

# Operations only an owner's or admin's key may call (agents.roles): a member's key is refused
# (403 admin_only) before anything is looked up, and nothing changes.
ADMIN_ONLY = [
    ("DELETE", "/agents/{agent_id}", None),
    ("DELETE", "/end-users/{end_user_id}", None),
    ("POST", "/webhooks", {"url": "https://example.com/hook", "events": ["memory.updated"]}),
    ("PATCH", "/webhooks/{webhook_id}", {"active": True}),
    ("DELETE", "/webhooks/{webhook_id}", None),
    ("GET", "/audit-log", None),
]

MODELS = [
    AuditEvent,
    Agent,
    AgentVersion,
    AgentDraft,
    EndUser,
    Conversation,
    Message,
    ActionRun,
    Memory,
    MemoryRun,
    Consent,
    UsageDay,
    Endpoint,
    Delivery,
]


def snapshot():
    """Every row the API could touch (API keys aside: their last use is recorded by design)."""
    return {model.__name__: list(model.objects.order_by("pk").values()) for model in MODELS}


@pytest.fixture
def team_a_world(agent):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_ananya")
    chat_record.message_record(conversation=conversation, kind="user", text="I work from the Pune office.")
    chat_record.action_run_record(conversation=conversation, name="renew_plan", status="succeeded")
    memory_set(end_user=conversation.end_user, text="Works from the Pune office.")
    consent_set(end_user=conversation.end_user, agreed=True, source="api")
    # Paused: nothing is ever sent from these tests.
    webhook = endpoint_create(team=agent.team, url="https://example.com/hook", events=["end_user.erased"])
    Endpoint.objects.filter(pk=webhook.pk).update(active=False)
    return {"agent": agent, "conversation": conversation, "webhook": webhook}


@pytest.fixture
def team_b_api(other_team):
    team, _ = other_team
    agent_services.agent_create(team=team, name="Globex bot", config={"memorySettings": {"on": True}})
    return api_in_process(team)


def fill(route, *, agent_id, conversation_id, end_user_id="u_ananya", webhook_id=MISSING_WEBHOOK, job_id=1):
    return route.format(
        agent_id=agent_id,
        conversation_id=conversation_id,
        end_user_id=end_user_id,
        webhook_id=webhook_id,
        job_id=job_id,
    )


def test_the_matrix_covers_every_operation_in_the_schema(client):
    schema = client.get("/api/schema/?format=json").json()
    operations = {
        (method.upper(), path.removeprefix("/api/v1"))
        for path, item in schema["paths"].items()
        for method in item
        if method in {"get", "put", "post", "patch", "delete"}
    }
    assert operations == {(method, route) for method, route, _ in MATRIX + TEAM_WIDE}


@pytest.mark.parametrize("method, route, body", MATRIX, ids=[f"{m} {r}" for m, r, _ in MATRIX])
def test_another_teams_resource_is_not_found_and_nothing_changes(team_a_world, team_b_api, method, route, body):
    agent, conversation = team_a_world["agent"], team_a_world["conversation"]
    before = snapshot()
    webhook = team_a_world["webhook"]
    theirs = team_b_api.call(
        method,
        fill(route, agent_id=agent.public_id, conversation_id=conversation.public_id, webhook_id=webhook.public_id),
        body,
    )
    missing = team_b_api.call(method, fill(route, agent_id=MISSING_AGENT, conversation_id=MISSING_CONVERSATION), body)
    assert theirs.status == 404, theirs.body
    assert theirs.code in {"agent_not_found", "conversation_not_found", "webhook_not_found"}
    assert theirs.body == missing.body and theirs.status == missing.status
    assert snapshot() == before


def test_team_b_own_agent_with_team_a_end_user_id_never_reaches_team_a(team_a_world, team_b_api):
    b_agent = Agent.objects.get(name="Globex bot")
    base = f"/agents/{b_agent.public_id}/end-users/u_ananya"
    assert team_b_api.get(f"{base}/memory").code == "end_user_not_found"
    before = snapshot()
    assert team_b_api.delete(base).code == "end_user_not_found"
    assert team_b_api.delete(f"{base}/memory").status == 204
    assert snapshot() == before
    assert team_b_api.get(f"/agents/{b_agent.public_id}/memories").body["memories"] == []
    # Writing on its own agent makes team B's own end user; team A's memory is untouched.
    assert team_b_api.put(f"{base}/memory", {"text": "Likes tea."}).status == 200
    assert Memory.objects.get(agent=team_a_world["agent"]).text == "Works from the Pune office."
    assert EndUser.objects.filter(external_id="u_ananya").count() == 2


def test_team_wide_operations_never_show_or_touch_another_teams_rows(team_a_world, team_b_api):
    agent = team_a_world["agent"]
    listed = team_b_api.get("/agents")
    assert listed.status == 200 and [a["name"] for a in listed.body["agents"]] == ["Globex bot"]
    before = snapshot()
    # Team A's end user is unknown to team B: the team-wide erase answers as for anyone unknown.
    erased = team_b_api.delete("/end-users/u_ananya")
    assert (erased.status, erased.code) == (404, "end_user_not_found")
    assert erased.body == team_b_api.delete("/end-users/u_nobody").body
    assert snapshot() == before
    created = team_b_api.post("/agents", {"name": "Globex sales"})
    assert created.status == 201
    assert Agent.objects.get(public_id=created.body["id"]).team.slug == "globex"
    assert Agent.objects.filter(team=agent.team).count() == 1
    # Team B's own u_ananya goes; team A's stays.
    b_agent = Agent.objects.get(name="Globex bot")
    assert (
        team_b_api.put(f"/agents/{b_agent.public_id}/end-users/u_ananya/memory", {"text": "Likes tea."}).status == 200
    )
    erased = team_b_api.delete("/end-users/u_ananya")
    assert erased.status == 200 and [a["agentId"] for a in erased.body["agents"]] == [b_agent.public_id]
    assert Memory.objects.get(agent=agent).text == "Works from the Pune office."
    # Webhooks: team B lists and makes only its own.
    assert team_b_api.get("/webhooks").body == {"webhooks": []}
    made = team_b_api.post("/webhooks", {"url": "https://example.com/hook", "events": ["memory.updated"]})
    assert made.status == 201 and Endpoint.objects.get(public_id=made.body["id"]).team.slug == "globex"
    assert [w["id"] for w in team_b_api.get("/webhooks").body["webhooks"]] == [made.body["id"]]


# --- Roles: the same team, a member's key ---------------------------------------------------


def _key_of(team, role: str):
    """An in-process client with a key made by a person of `role` in the team (a member's key was made
    before roles existed, or while they were an admin)."""
    user = User.objects.create_user(username=f"{role}@acme.test", email=f"{role}@acme.test", password="x" * 12)
    Membership.objects.create(team=team, user=user, role=role)
    _, raw = agent_services.api_key_create(team=team, name=f"{role}'s key", created_by=user)
    return InProcessApi(raw)


def test_the_admin_only_list_is_every_operation_documented_as_admin_only(client):
    schema = client.get("/api/schema/?format=json").json()
    documented = {
        (method.upper(), path.removeprefix("/api/v1"))
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in {"get", "put", "post", "patch", "delete"}
        and "admin_only" in json.dumps(operation.get("responses", {}).get("403", {}))
    }
    assert documented == {(method, route) for method, route, _ in ADMIN_ONLY}


@pytest.mark.parametrize("method, route, body", ADMIN_ONLY, ids=[f"{m} {r}" for m, r, _ in ADMIN_ONLY])
def test_a_members_key_is_refused_every_admin_only_operation_and_nothing_changes(team_a_world, method, route, body):
    agent, conversation, webhook = team_a_world["agent"], team_a_world["conversation"], team_a_world["webhook"]
    member = _key_of(agent.team, "member")
    path = fill(route, agent_id=agent.public_id, conversation_id=conversation.public_id, webhook_id=webhook.public_id)
    before = snapshot()
    refused = member.call(method, path, body)
    assert (refused.status, refused.code) == (403, "admin_only"), refused.body
    assert "owner or admin" in refused.body["error"]["message"]
    assert snapshot() == before
    # The same call with an admin's key is not refused for its role.
    allowed = _key_of(agent.team, "admin").call(method, path, body)
    assert allowed.status < 400, allowed.body


def test_a_members_key_still_reads_and_edits_memories_and_builds_agents(team_a_world):
    agent = team_a_world["agent"]
    member = _key_of(agent.team, "member")
    base = f"/agents/{agent.public_id}"
    assert member.get(f"{base}/end-users/u_ananya/memory").status == 200
    assert member.put(f"{base}/end-users/u_ananya/memory", {"text": "Prefers email."}).status == 200
    assert member.patch(base, {"instructions": "Be brief."}).status == 200
    assert member.post("/agents", {"name": "Sales"}).status == 201
    assert member.get("/webhooks").status == 200
    assert member.delete(f"{base}/end-users/u_ananya").status == 200  # one person on one agent
