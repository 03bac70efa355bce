"""Writes to memories. Every path that changes a memory's text goes through this module and the
guards in `policy`, and leaves an audit row (MemoryRun) with counts, never words."""
from agents.models import Agent, Conversation, EndUser

from .models import Memory


def stopped_gate(*, agent: Agent, end_user: EndUser, settings: dict, source: str) -> str | None:
    """A stopped memory is never read or written: conversations start without it (R20)."""
    stopped = Memory.objects.filter(end_user=end_user, stopped_at__isnull=False).exists()
    return Conversation.MemoryOff.STOPPED if stopped else None
