"""Drafts, Publish and numbered versions (R1, R2, R3)."""

import pytest

from agents import services
from agents.errors import AppError, InvalidConfig
from agents.models import AgentDraft, AgentVersion, Plan
from memory.store.settings import DEFAULT_MEMORY_SETTINGS
from surfaces.chat import start as chat_start


def test_a_new_agent_has_version_1_with_every_memory_setting_at_its_default(team):
    agent = services.agent_create(team=team, name="Helper")
    version = agent.versions.get()
    assert version.number == 1
    assert (
        version.config["memorySettings"]
        == {
            "on": False,
            "instructions": "",
            "keepForDays": 90,
            "quietMinutes": 30,
            "showSwitch": True,
            "askFirst": False,
            "privacyUrl": "",
        }
        == DEFAULT_MEMORY_SETTINGS
    )
    assert agent.public_id.startswith("agt_") and len(agent.public_id) == 16


def test_draft_changes_wait_for_publish_which_makes_the_next_numbered_version(agent, user):
    services.agent_draft_update(agent=agent, changes={"memorySettings": {"quietMinutes": 5}}, user=user)
    assert AgentVersion.objects.published(agent).config["memorySettings"]["quietMinutes"] == 15
    version = services.agent_publish(agent=agent, user=user)
    assert version.number == 2
    assert version.config["memorySettings"]["quietMinutes"] == 5
    assert version.published_by == user
    assert not AgentDraft.objects.filter(agent=agent).exists()
    assert list(agent.versions.values_list("number", flat=True)) == [2, 1]


def test_a_chat_keeps_the_version_it_started_on(agent, user):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    services.agent_update(agent=agent, changes={"memorySettings": {"quietMinutes": 60}})
    conversation.refresh_from_db()
    assert conversation.version.number == 1
    assert conversation.version.config["memorySettings"]["quietMinutes"] == 15
    later = chat_start.conversation_start(agent=agent, external_id="u_1")
    assert later.version.number == 2


def test_api_update_publishes_at_once_and_no_change_makes_no_version(agent):
    v2 = services.agent_update(agent=agent, changes={"memorySettings": {"keepForDays": 30}})
    assert v2.number == 2
    same = services.agent_update(agent=agent, changes={"memorySettings": {"keepForDays": 30}})
    assert same.number == 2 and agent.versions.count() == 2


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"quietMinutes": 7}, "memorySettings.quietMinutes"),
        ({"keepForDays": 0}, "memorySettings.keepForDays"),
        ({"keepForDays": 3651}, "memorySettings.keepForDays"),
        ({"privacyUrl": "javascript:alert(1)"}, "memorySettings.privacyUrl"),
        ({"privacyUrl": "ftp://example.com/p"}, "memorySettings.privacyUrl"),
        ({"on": "yes"}, "memorySettings.on"),
        ({"colour": "blue"}, "memorySettings.colour"),
    ],
)
def test_invalid_memory_settings_are_refused_on_every_path_and_change_nothing(agent, user, changes, field):
    for attempt in (
        lambda: services.agent_draft_update(agent=agent, changes={"memorySettings": changes}, user=user),
        lambda: services.agent_update(agent=agent, changes={"memorySettings": changes}),
    ):
        with pytest.raises(InvalidConfig) as info:
            attempt()
        assert info.value.field == field
        assert info.value.message
    assert agent.versions.count() == 1
    assert not AgentDraft.objects.filter(agent=agent).exists()


def test_memory_cannot_be_turned_on_below_the_team_plan(team):
    team.plan = Plan.PRO
    team.save()
    agent = services.agent_create(team=team, name="Helper")
    with pytest.raises(AppError) as info:
        services.agent_update(agent=agent, changes={"memorySettings": {"on": True}})
    assert info.value.code == "plan_required"
    assert "Team plan" in info.value.message
    assert agent.versions.count() == 1


def test_restoring_an_old_version_makes_it_the_draft(agent, user):
    services.agent_update(agent=agent, changes={"memorySettings": {"instructions": "Keep their office."}})
    services.agent_version_restore(agent=agent, number=1, user=user)
    draft = AgentDraft.objects.get(agent=agent)
    assert draft.config["memorySettings"]["instructions"] == ""
    assert AgentVersion.objects.published(agent).number == 2


def test_turning_memory_off_records_when(agent):
    services.agent_update(agent=agent, changes={"memorySettings": {"on": False}})
    agent.refresh_from_db()
    assert agent.memory_off_since is not None
    services.agent_update(agent=agent, changes={"memorySettings": {"on": True}})
    agent.refresh_from_db()
    assert agent.memory_off_since is None


def test_agent_version_rows_are_never_edited_by_publish(agent, user):
    before = AgentVersion.objects.get(agent=agent, number=1).config
    services.agent_update(agent=agent, changes={"guardrails": "Never discuss pricing."})
    assert AgentVersion.objects.get(agent=agent, number=1).config == before
