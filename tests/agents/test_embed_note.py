"""The note a website chat's agent receives (R17): built at start with its preamble and kept in step
with the memory (memory.store.commit), never holding a line the policy refuses, and absent when memory is
not used for the chat."""

import json

import pytest
from django.core.cache import cache
from django.test import Client

from agents import services as agent_services
from agents.models import Conversation, EndUser
from memory.models import Memory
from memory.store.note import NOTE_PREAMBLE
from memory.store.services import memory_set
from surfaces.chat import send as chat
from surfaces.chat import start as chat_start
from surfaces.embed.services import visitor_id_verify


@pytest.fixture(autouse=True)
def fresh_rate_counts():
    cache.clear()


def start(client, agent, **body):
    return client.post(
        f"/embed/v1/agents/{agent.public_id}/start", data=json.dumps(body), content_type="application/json"
    ).json()


def test_the_note_is_built_at_start_with_its_preamble_and_follows_the_memory(agent):
    client = Client()
    first = start(client, agent)
    end_user = EndUser.objects.get(external_id=visitor_id_verify(agent, first["visitorId"]))
    memory_set(end_user=end_user, text="Prefers email over phone.\nMight move to the annual plan (said once, 3 Nov).")
    chat_with_memory = start(client, agent, visitorId=first["visitorId"])
    conversation = Conversation.objects.get(public_id=chat_with_memory["conversation"]["id"])
    assert conversation.memory_note.startswith(NOTE_PREAMBLE)
    for words in ("may be incomplete", '"said once"', "Never rely on a fact being here"):
        assert words in NOTE_PREAMBLE
    assert (
        "<memory>\nPrefers email over phone.\nMight move to the annual plan (said once, 3 Nov).\n</memory>"
        in conversation.memory_note
    )
    # A change while the chat runs reaches its next turn (issue 9: a stop or delete must); the next chat gets it too.
    memory_set(end_user=end_user, text="Prefers phone over email.")
    conversation.refresh_from_db()
    assert "Prefers phone over email." in chat.system_prompt(conversation)
    assert "Prefers email over phone." not in chat.system_prompt(conversation)
    later = Conversation.objects.get(public_id=start(client, agent, visitorId=first["visitorId"])["conversation"]["id"])
    assert "Prefers phone over email." in later.memory_note


def test_no_note_without_memory_for_the_chat(agent):
    client = Client()
    first = start(client, agent)
    end_user = EndUser.objects.get(external_id=visitor_id_verify(agent, first["visitorId"]))
    memory_set(end_user=end_user, text="Prefers email over phone.")
    for body in ({"memory": False}, {"switch": False}):
        conversation = Conversation.objects.get(
            public_id=start(client, agent, visitorId=first["visitorId"], **body)["conversation"]["id"]
        )
        assert conversation.memory_note == "" and "<memory>" not in chat.system_prompt(conversation)


def test_a_line_the_policy_refuses_never_reaches_the_chat(agent):
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id="u_1")
    memory_set(end_user=end_user, text="Prefers email over phone.")
    # Only a direct write (a row from before the guards) can hold such a line.
    Memory.objects.filter(end_user=end_user).update(
        text="Prefers email over phone.\nAPI key AKIAIOSFODNN7EXAMPLE for the account."
    )
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    assert "Prefers email over phone." in conversation.memory_note and "AKIA" not in conversation.memory_note
    turn = chat.conversation_send(conversation=conversation, text="Hi! Can I get my receipt?")
    assert "AKIA" not in turn.reply.text and "email you the receipt" in turn.reply.text
