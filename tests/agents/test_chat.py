"""A chat turn: the reply through the engine, with the note when memory is used; nothing kept on failure."""

import pytest

from agents import services
from agents.engines import EngineError
from agents.errors import AppError
from agents.models import Message, UsageDay
from memory.store.services import memory_set
from surfaces.chat import send as chat
from surfaces.chat import start as chat_start
from tests.fake_openai import chat_text


def test_a_returning_person_is_greeted_from_the_note(agent):
    end_user = services.end_user_get_or_create(agent=agent, external_id="u_1")
    memory_set(end_user=end_user, text="Prefers email over phone.")
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    assert "Prefers email over phone." in conversation.memory_note
    turn = chat.conversation_send(conversation=conversation, text="Hi! Can I get my receipt?")
    assert "Hi again" in turn.reply.text and "email you the receipt" in turn.reply.text
    assert UsageDay.objects.get().replies == 1


def test_no_note_when_memory_is_not_used(agent, openai_engine):
    end_user = services.end_user_get_or_create(agent=agent, external_id="u_1")
    memory_set(end_user=end_user, text="Prefers email over phone.")
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1", memory=False)
    assert conversation.memory_note == ""
    openai_engine.script.append(chat_text("Hello!"))
    chat.conversation_send(conversation=conversation, text="Hi")
    system = openai_engine.requests[0]["json"]["messages"][0]["content"]
    assert "Prefers email" not in system and "<memory>" not in system


def test_the_note_is_in_the_system_prompt_when_memory_is_used(agent, openai_engine):
    end_user = services.end_user_get_or_create(agent=agent, external_id="u_1")
    memory_set(end_user=end_user, text="Prefers email over phone.\nMight move to the annual plan (said once, 3 Nov).")
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    openai_engine.script.append(chat_text("Hello again!"))
    turn = chat.conversation_send(conversation=conversation, text="Hi")
    system = openai_engine.requests[0]["json"]["messages"][0]["content"]
    assert "<memory>\nPrefers email over phone.\nMight move to the annual plan (said once, 3 Nov).\n</memory>" in system
    assert "said once" in system.split("<memory>")[0]  # the preamble tells the agent to lean less on them
    assert turn.reply.text == "Hello again!"


def test_a_model_failure_records_nothing(agent, openai_engine):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    openai_engine.default = {"status": 500, "body": {"error": {"message": "down"}}}
    with pytest.raises(EngineError):
        chat.conversation_send(conversation=conversation, text="Hello")
    assert not Message.objects.exists() and not UsageDay.objects.exists()


def test_empty_and_oversized_messages_are_refused(agent):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    for bad in ("", "   ", "x" * 4001, None):
        with pytest.raises(AppError):
            chat.conversation_send(conversation=conversation, text=bad)
    assert not Message.objects.exists()
