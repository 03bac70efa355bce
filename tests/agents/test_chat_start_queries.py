"""Chat start and a turn cost with memory what they cost without, give or take one indexed read
(issue 14's goals, counted here; their times are measured in bench/api.py, never asserted)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents import services
from memory.store.services import memory_set, memory_stop
from surfaces.chat import start as chat_start
from surfaces.chat.send import conversation_send

pytestmark = pytest.mark.django_db


def start_queries(agent, memory):
    chat_start.conversation_start(agent=agent, external_id="u_q", memory=memory)  # the end user exists
    with CaptureQueriesContext(connection) as captured:
        conversation = chat_start.conversation_start(agent=agent, external_id="u_q", memory=memory)
    assert conversation.uses_memory is memory
    return conversation, len(captured.captured_queries)


def test_chat_start_with_memory_costs_at_most_one_query_more(agent):
    memory_set(end_user=services.end_user_get_or_create(agent=agent, external_id="u_q"), text="Prefers email.")
    with_memory, queries_on = start_queries(agent, True)
    without, queries_off = start_queries(agent, False)
    assert queries_on <= queries_off + 1
    assert "Prefers email." in with_memory.memory_note and without.memory_note == ""


def test_a_stopped_memory_is_still_gated_with_the_single_read(agent):
    end_user = services.end_user_get_or_create(agent=agent, external_id="u_s")
    memory_set(end_user=end_user, text="Prefers email.")
    memory_stop(end_user=end_user)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_s")
    assert conversation.uses_memory is False and conversation.memory_off_reason == "stopped"
    assert conversation.memory_note == ""


def test_a_turn_with_memory_costs_no_extra_query_when_nothing_changed(agent):
    memory_set(end_user=services.end_user_get_or_create(agent=agent, external_id="u_t"), text="Prefers email.")
    counts = {}
    for memory in (True, False):
        conversation = chat_start.conversation_start(agent=agent, external_id="u_t", memory=memory)
        conversation_send(conversation=conversation, text="Hello")
        with CaptureQueriesContext(connection) as captured:
            conversation_send(conversation=conversation, text="Thanks, that helps.")
        counts[memory] = len(captured.captured_queries)
    assert counts[True] == counts[False]
