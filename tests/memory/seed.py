"""Small builders for the Memory-tab tests: chats through the real services, memories through the
real writer or `memory_set`, and a fingerprint of everything Try must leave alone."""

import hashlib
import json
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from agents import services as agent_services
from memory.models import Memory
from memory.store import services
from memory.writer import sweep as writer_sweep
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start

# Three days ago at 09:00: chats are in the past of every run that reads them.
T0 = (timezone.now() - timedelta(days=3)).replace(hour=9, minute=0, second=0, microsecond=0)


def chat(agent, external_id, turns, *, start=T0, memory=True, project=""):
    """A conversation: ("user"|"agent"|..., text) or ("action", name, status), a minute apart."""
    conversation = chat_start.conversation_start(
        agent=agent, external_id=external_id, memory=memory, project=project, now=start
    )
    at = start
    for turn in turns:
        at += timedelta(minutes=1)
        if turn[0] == "action":
            chat_record.action_run_record(conversation=conversation, name=turn[1], status=turn[2], now=at)
        else:
            chat_record.message_record(conversation=conversation, kind=turn[0], text=turn[1], now=at)
    return conversation, at


def chat_and_remember(agent, external_id, turns, *, start=T0):
    """A chat, then its quiet-window run (the real writer), as the schedule would."""
    conversation, last = chat(agent, external_id, turns, start=start)
    writer_sweep.memory_sweep(now=last + timedelta(minutes=61), run_inline=True)
    return conversation, last


def remembered(agent, external_id, text, *, at=None, actor=None):
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id=external_id)
    return services.memory_set(end_user=end_user, text=text, actor=actor, now=at)


TABLES = (
    "memory_memory",
    "memory_memoryrun",
    "memory_applyjob",
    "agents_usageday",
    "agents_conversation",
    "agents_enduser",
    "agents_message",
    "agents_actionrun",
    "consent_consent",
    "django_q_ormq",
    "django_q_task",
)


def database_fingerprint() -> dict:
    """Every row of the tables a memory run could touch, hashed per table (with its count)."""
    out = {}
    with connection.cursor() as cursor:
        for table in TABLES:
            cursor.execute(f"SELECT * FROM {table} ORDER BY 1")  # noqa: S608 (fixed names)
            rows = cursor.fetchall()
            digest = hashlib.sha256(json.dumps(rows, default=str).encode()).hexdigest()
            out[table] = (len(rows), digest)
    return out


def memory_lines(agent, external_id) -> list[str]:
    memory = Memory.objects.filter(end_user__agent=agent, end_user__external_id=external_id).first()
    return memory.lines if memory else []
