"""The memory's services: the retention sweep, the gate a conversation starts through, and the
actions of memory.store.actions under the name callers have long imported them by (every write
is one of those actions; this module writes nothing itself)."""

from datetime import datetime

from django.utils import timezone

from agents.models import Agent, Conversation, EndUser
from memory.store.actions import (
    CHANGED,
    MEMORY_OFF,
    PLAN_REQUIRED,
    LineAdded,
    MadeOn,
    end_user_erase,
    memory_delete,
    memory_expire,
    memory_line_add,
    memory_line_delete,
    memory_line_edit,
    memory_resume,
    memory_set,
    memory_stop,
    memory_write_refusal,
)
from memory.store.note import memory_at_start
from memory.store.selectors import memories_expired

__all__ = [
    "CHANGED",
    "MEMORY_OFF",
    "PLAN_REQUIRED",
    "LineAdded",
    "MadeOn",
    "end_user_erase",
    "memory_delete",
    "memory_expire",
    "memory_line_add",
    "memory_line_delete",
    "memory_line_edit",
    "memory_resume",
    "memory_retention_sweep",
    "memory_set",
    "memory_stop",
    "memory_write_refusal",
    "stopped_gate",
]


def stopped_gate(*, agent: Agent, end_user: EndUser, settings: dict, source: str) -> str | None:
    """A stopped memory is never read or written: conversations start without it (R20)."""
    memory = memory_at_start(end_user)  # read once: the note reuses it (one query per start)
    return Conversation.MemoryOff.STOPPED if memory is not None and memory.stopped_at is not None else None


def memory_retention_sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Retention, once (the daily schedule and `manage.py memory_retention`): every memory whose
    keepForDays has passed (from the last chat, or from its last change when there was no chat),
    every memory of an agent whose memory has been off for over 30 days (R4), and every memory
    untouched for 30 days on an agent whose memory never was on or whose plan has no memory, is
    emptied with a new horizon (`memory_expire`, rules in `selectors.memories_expired`). The rows
    stay, empty: a stop and what was read survive; the words do not. Returns counts."""
    now = now or timezone.now()
    expired = 0
    for agent in Agent.objects.filter(memories__isnull=False).distinct().select_related("team").order_by("pk"):
        for memory_id in list(memories_expired(agent, now).values_list("pk", flat=True)):
            expired += memory_expire(memory_id=memory_id, now=now)
    return {"expired": expired}
