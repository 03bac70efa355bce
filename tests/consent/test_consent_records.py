"""Consent records (R26): agreedAt per (agent, end user) with its source; a no keeps memory off
until a yes; an unknown source is refused and records nothing."""

from datetime import timedelta

import pytest
from django.utils import timezone

from agents import services as agent_services
from agents.errors import AppError
from consent.models import Consent
from consent.selectors import consent_state
from consent.services import consent_set
from surfaces.chat import start as chat_start


@pytest.fixture
def end_user(agent):
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"askFirst": True}})
    return agent_services.end_user_get_or_create(agent=agent, external_id="u_1")


def test_no_answer_yet_has_no_state_and_memory_stays_off(agent, end_user):
    assert consent_state(end_user) is None
    assert chat_start.conversation_start(agent=agent, external_id="u_1").memory_off_reason == "consent"


@pytest.mark.parametrize("source", ["chat_prompt", "site_step", "api"])
def test_a_yes_keeps_its_date_and_source(agent, end_user, source):
    at = timezone.now() - timedelta(days=2)
    consent_set(end_user=end_user, agreed=True, source=source, now=at)
    assert consent_state(end_user) == {"agreedAt": at.isoformat(), "declinedAt": None, "source": source}
    assert Consent.objects.get().agent == agent
    # A later yes from elsewhere keeps the first date and where it came from.
    consent_set(end_user=end_user, agreed=True, source="api" if source != "api" else "chat_prompt")
    assert consent_state(end_user) == {"agreedAt": at.isoformat(), "declinedAt": None, "source": source}


def test_a_no_keeps_memory_off_until_a_new_yes(agent, end_user):
    consent_set(end_user=end_user, agreed=True, source="chat_prompt")
    consent_set(end_user=end_user, agreed=False, source="site_step")
    state = consent_state(end_user)
    assert state["agreedAt"] is None and state["declinedAt"] and state["source"] == "site_step"
    assert chat_start.conversation_start(agent=agent, external_id="u_1").memory_off_reason == "consent"
    later = timezone.now() + timedelta(minutes=1)
    consent_set(end_user=end_user, agreed=True, source="chat_prompt", now=later)
    assert consent_state(end_user) == {"agreedAt": later.isoformat(), "declinedAt": None, "source": "chat_prompt"}
    assert chat_start.conversation_start(agent=agent, external_id="u_1").uses_memory


@pytest.mark.parametrize("source", ["", "email", None, "CHAT_PROMPT"])
def test_an_unknown_source_is_refused_and_records_nothing(end_user, source):
    with pytest.raises(AppError) as refused:
        consent_set(end_user=end_user, agreed=True, source=source)
    assert refused.value.code == "invalid_source" and refused.value.field == "source"
    assert not Consent.objects.exists()


def test_consent_is_per_agent_and_end_user(agent, team, end_user):
    other_agent = agent_services.agent_create(
        team=team, name="Sales", config={"memorySettings": {"on": True, "askFirst": True}}
    )
    consent_set(end_user=end_user, agreed=True, source="chat_prompt")
    assert chat_start.conversation_start(agent=agent, external_id="u_1").uses_memory
    # The same person id on another agent has not said yes there.
    assert chat_start.conversation_start(agent=other_agent, external_id="u_1").memory_off_reason == "consent"
    assert chat_start.conversation_start(agent=agent, external_id="u_2").memory_off_reason == "consent"


def test_erasing_the_end_user_removes_their_consent(end_user):
    from memory.store.services import end_user_erase

    consent_set(end_user=end_user, agreed=True, source="chat_prompt")
    end_user_erase(end_user=end_user)
    assert not Consent.objects.exists()
