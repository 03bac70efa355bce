"""Recording what happens in a chat, for every surface (the chat turn, the API's events, the demo):
the message or action row, and in a conversation that uses memory the end of its quiet window (R11).

Every message path comes through here, so the memory writer always learns that a chat moved on:
`memory.store.due.mark` sets when the quiet window ends, and `agents.services` saves it with the
activity time in the same UPDATE (a turn with memory costs no query more than one without).
"""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from agents import services as agent_services
from agents.models import ActionRun, Conversation, Message
from memory.store import counters, due


@transaction.atomic
def message_record(*, conversation: Conversation, kind: str, text: str, now: datetime | None = None) -> Message:
    """Record one message of any kind (`agents.services.message_record`) and mark the conversation
    due when its quiet window ends; the memory row's R21 fields move with it (`memory.store.counters`)."""
    now = now or timezone.now()
    due.mark(conversation, now)
    message = agent_services.message_record(conversation=conversation, kind=kind, text=text, now=now)
    counters.message_recorded(message, conversation, now)
    return message


@transaction.atomic
def action_run_record(*, conversation: Conversation, name: str, status: str, now: datetime | None = None) -> ActionRun:
    """Record an action that ran (`agents.services.action_run_record`) and mark the conversation due
    when its quiet window ends."""
    now = now or timezone.now()
    due.mark(conversation, now)
    return agent_services.action_run_record(conversation=conversation, name=name, status=status, now=now)
