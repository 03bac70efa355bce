"""Whether a conversation uses memory is decided once, at start, and stored (R3, R4, R20, R23)."""

from datetime import timedelta

from django.utils import timezone

from agents import services
from agents.models import Conversation, Plan
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start


def test_memory_is_used_when_on_and_nothing_stops_it(agent):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    assert (conversation.uses_memory, conversation.memory_off_reason) == (True, "")


def test_each_reason_memory_is_not_used_is_recorded(agent, team):
    assert chat_start.conversation_start(agent=agent, external_id="u_1", memory=False).memory_off_reason == "requested"
    assert (
        chat_start.conversation_start(agent=agent, external_id="u_1", project="proj_9").memory_off_reason == "project"
    )
    assert chat_start.conversation_start(agent=agent, external_id="u_1", switch_on=False).memory_off_reason == "switch"
    services.agent_update(agent=agent, changes={"memorySettings": {"on": False}})
    assert chat_start.conversation_start(agent=agent, external_id="u_1").memory_off_reason == "settings"
    services.agent_update(agent=agent, changes={"memorySettings": {"on": True}})
    team.plan = Plan.PRO
    team.save()
    assert chat_start.conversation_start(agent=agent, external_id="u_1").memory_off_reason == "plan"


def test_the_decision_is_kept_for_the_life_of_the_conversation(agent):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1", memory=False)
    chat_record.message_record(conversation=conversation, kind="user", text="hello")
    conversation.refresh_from_db()
    assert conversation.uses_memory is False and conversation.memory_due_at is None


def test_every_message_moves_activity_and_the_quiet_window(agent):
    start = timezone.now()
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1", now=start)
    later = start + timedelta(minutes=3)
    chat_record.message_record(conversation=conversation, kind="user", text="hello", now=later)
    conversation.refresh_from_db()
    assert conversation.last_activity_at == later
    assert conversation.memory_due_at == later + timedelta(minutes=15)
    assert conversation.end_user.last_chat_at == later
    chat_record.action_run_record(
        conversation=conversation, name="renew_plan", status="succeeded", now=later + timedelta(minutes=1)
    )
    assert Conversation.objects.get().memory_due_at == later + timedelta(minutes=16)


def test_a_bad_end_user_id_is_refused_and_creates_nothing(agent):
    import pytest

    from agents.errors import AppError
    from agents.models import EndUser

    for bad in ("", "   ", "x" * 201, None, 42, "u_\x00_1"):
        with pytest.raises(AppError):
            chat_start.conversation_start(agent=agent, external_id=bad)
    assert not EndUser.objects.exists() and not Conversation.objects.exists()
