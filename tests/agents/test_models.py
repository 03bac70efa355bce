"""Constraints hold in the database itself, not only in Python."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents import services
from agents.models import AgentVersion, Conversation, EndUser, Message
from memory.models import Memory
from surfaces.chat import start as chat_start


def test_duplicate_memory_for_one_end_user_fails_in_the_database(agent):
    end_user = EndUser.objects.create(agent=agent, external_id="u_1")
    Memory.objects.create(agent=agent, end_user=end_user, text="Prefers email.", updated_at=timezone.now())
    with pytest.raises(IntegrityError), transaction.atomic():
        Memory.objects.bulk_create([Memory(agent=agent, end_user=end_user, text="x", updated_at=timezone.now())])


def test_end_user_id_is_unique_per_agent_but_not_across_agents(agent, team):
    other = services.agent_create(team=team, name="Sales")
    EndUser.objects.create(agent=agent, external_id="u_1")
    EndUser.objects.create(agent=other, external_id="u_1")
    with pytest.raises(IntegrityError), transaction.atomic():
        EndUser.objects.create(agent=agent, external_id="u_1")


def test_version_numbers_are_unique_per_agent(agent):
    with pytest.raises(IntegrityError), transaction.atomic():
        AgentVersion.objects.create(agent=agent, number=1, config={}, published_at=timezone.now())


def test_message_kind_is_checked_by_the_database(agent):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Message.objects.bulk_create(
            [Message(conversation=conversation, kind="gossip", text="x", created_at=timezone.now())]
        )


def test_a_conversation_without_memory_can_never_be_due(agent):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1", memory=False)
    with pytest.raises(IntegrityError), transaction.atomic():
        Conversation.objects.filter(pk=conversation.pk).update(memory_due_at=timezone.now() + timedelta(minutes=5))


def test_a_stopped_memory_holds_no_text_in_the_database(agent):
    end_user = EndUser.objects.create(agent=agent, external_id="u_1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Memory.objects.create(
            agent=agent, end_user=end_user, text="Prefers email.", stopped_at=timezone.now(), updated_at=timezone.now()
        )
