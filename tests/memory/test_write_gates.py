"""The plan and the switch gate every write (issue 25, R3, R4): on a plan without memory a set
answers 403 `plan_required`, on an agent whose memory is off (or was never on) 409 `memory_off`,
through the API and the Memory tab alike, and nothing changes; deleting, stopping and erasing
still work there, because they only take away."""

import pytest
from django.urls import reverse

from agents import services as agent_services
from agents.models import EndUser, Plan
from memory.models import Memory
from memory.store import services
from tests.api_helpers import api_in_process
from tests.conftest import make_team

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def memory_path(agent, external_id):
    return f"/agents/{agent.public_id}/end-users/{external_id}/memory"


def test_a_set_on_a_plan_without_memory_answers_plan_required_and_keeps_nothing(db):
    team, _ = make_team("pro", plan=Plan.PRO)
    agent = agent_services.agent_create(team=team, name="Support")
    answer = api_in_process(team).put(memory_path(agent, "u_ananya"), {"text": "Prefers email over phone."})
    assert (answer.status, answer.code) == (403, "plan_required"), answer.body
    assert not Memory.objects.exists() and not EndUser.objects.exists()


def test_a_team_downgraded_to_a_plan_without_memory_cannot_set_though_its_version_says_on(agent, team):
    team.plan = Plan.PRO
    team.save(update_fields=["plan"])
    answer = api_in_process(team).put(memory_path(agent, "u_ananya"), {"text": "Prefers email over phone."})
    assert (answer.status, answer.code) == (403, "plan_required")
    assert not Memory.objects.exclude(text="").exists()


@pytest.mark.parametrize("history", ["never_on", "turned_off"])
def test_a_set_where_memory_is_off_answers_memory_off_and_changes_nothing(team, user, history):
    agent = agent_services.agent_create(team=team, name="Support", user=user)
    api = api_in_process(team)
    if history == "turned_off":
        agent_services.agent_update(agent=agent, changes={"memorySettings": {"on": True}})
        assert api.put(memory_path(agent, "u_ananya"), {"text": "Speaks Hindi."}).status == 200
        agent_services.agent_update(agent=agent, changes={"memorySettings": {"on": False}})
    before = dict(Memory.objects.values_list("end_user__external_id", "text"))
    for external_id in ("u_ananya", "u_new"):
        answer = api.put(memory_path(agent, external_id), {"text": "Prefers email over phone."})
        assert (answer.status, answer.code) == (409, "memory_off"), answer.body
    assert dict(Memory.objects.values_list("end_user__external_id", "text")) == before
    assert not EndUser.objects.filter(external_id="u_new").exists()


def test_with_memory_off_a_team_can_still_delete_stop_and_erase(agent, team):
    api = api_in_process(team)
    for external_id in ("u_a", "u_b", "u_c"):
        assert api.put(memory_path(agent, external_id), {"text": "Speaks Hindi.\nPrefers email."}).status == 200
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"on": False}})
    assert api.delete(memory_path(agent, "u_a")).status == 204
    assert api.post(memory_path(agent, "u_b") + "/stop", {"stop": True}).status == 200
    assert api.delete(f"/agents/{agent.public_id}/end-users/u_c").status == 200
    texts = dict(Memory.objects.values_list("end_user__external_id", "text"))
    assert texts == {"u_a": "", "u_b": ""}
    assert Memory.objects.get(end_user__external_id="u_b").stopped_at is not None


def test_the_memory_tab_refuses_the_same_writes_and_still_deletes_a_line(member_client, agent):
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id="u_ananya")
    services.memory_set(end_user=end_user, text="Prefers email over phone.\nSpeaks Hindi.")
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"on": False}})
    args = [agent.public_id, end_user.pk]
    writes = [
        (reverse("memory:replace", args=args), {"text": "Speaks Tamil."}),
        (reverse("memory:line_add", args=args), {"text": "Speaks Tamil."}),
        (reverse("memory:line_edit", args=[*args, 1]), {"text": "Speaks Tamil.", "was": "Prefers email over phone."}),
    ]
    for path, fields in writes:
        page = member_client.post(path, fields, **HTMX).content.decode()
        assert "Memory is off for this agent" in page, path
    assert Memory.objects.get().text == "Prefers email over phone.\nSpeaks Hindi."
    member_client.post(reverse("memory:line_delete", args=[*args, 2]), {"was": "Speaks Hindi."}, **HTMX)
    assert Memory.objects.get().text == "Prefers email over phone."


def test_memory_off_is_in_the_one_error_table_and_documented_on_set():
    from django.test import Client

    from surfaces.http.errors import error_codes

    assert error_codes()["memory_off"][0] == 409 and error_codes()["plan_required"][0] == 403
    schema = Client().get("/api/schema/?format=json").json()
    put = schema["paths"]["/api/v1/agents/{agent_id}/end-users/{end_user_id}/memory"]["put"]
    assert "memory_off" in put["responses"]["409"]["description"]
    assert "plan_required" in put["responses"]["403"]["description"]
