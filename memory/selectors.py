"""Reads for memories: due work for the sweep, what a run reads, lists for the tab and the API."""
import base64
import binascii
from datetime import datetime, timedelta

from django.db.models import F, Min, Q, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from agents.errors import AppError

from agents.models import ActionRun, Conversation, EndUser, Message

from .models import Memory, MemoryRun

MAX_MESSAGES_PER_RUN = 200
MAX_CONTEXT_REPLIES = 20


def conversation_due_for_memory(*, now: datetime, limit: int = 5000) -> list[int]:
    """End users (ids) with a conversation whose quiet window has ended (`memory.due`'s)."""
    from .due import due_end_users

    return due_end_users(now=now, limit=limit)


def read_cutoff(*, end_user: EndUser, read_from: datetime | None, now: datetime) -> datetime:
    """How far a run may read: up to now, but never into a chat that is still active (its
    last activity is within its quiet window), so nothing is written while a chat is active (R11)."""
    from .due import active_conversations

    active = active_conversations(end_user.pk, now)
    if not active:
        return now
    unread = Message.objects.filter(conversation_id__in=active)
    if read_from is not None:
        unread = unread.filter(created_at__gt=read_from)
    earliest = unread.aggregate(first=Min("created_at"))["first"]
    return min(now, earliest) if earliest else now


def writer_input(*, end_user: EndUser, read_from: datetime | None, read_to: datetime) -> dict:
    """What a run may read (R12): the person's own messages and the action runs, only from
    conversations that used memory, after `read_from` and before `read_to`; the agent's replies
    in that span as context. Each item names the version its chat began on (`version_id`), which
    it is read under (with the published one, `writer.stricter_config`). Tool results, files and web pages are never selected."""
    span = Q(created_at__lt=read_to)
    if read_from is not None:
        span &= Q(created_at__gt=read_from)
    in_memory_chats = Q(conversation__end_user=end_user, conversation__uses_memory=True)
    messages = list(
        Message.objects.filter(in_memory_chats, span, kind=Message.Kind.USER)
        .order_by("created_at", "id")
        .values("id", "text", "created_at", version_id=F("conversation__version_id"))[:MAX_MESSAGES_PER_RUN]
    )
    # When the person typed more than one run reads, the rest waits for the next run.
    if len(messages) == MAX_MESSAGES_PER_RUN:
        read_to = messages[-1]["created_at"]
        span = Q(created_at__lte=read_to) & (Q(created_at__gt=read_from) if read_from else Q())
    actions = list(
        ActionRun.objects.filter(in_memory_chats, span)
        .order_by("created_at", "id")
        .values("id", "name", "status", "created_at", version_id=F("conversation__version_id"))[:MAX_MESSAGES_PER_RUN]
    )
    replies = list(
        Message.objects.filter(in_memory_chats, span, kind=Message.Kind.AGENT)
        .order_by("-created_at", "-id")
        .values("text", "created_at", version_id=F("conversation__version_id"))[:MAX_CONTEXT_REPLIES]
    )[::-1]
    return {"messages": messages, "actions": actions, "replies": replies, "read_to": read_to}


def memory_for_end_user(end_user: EndUser) -> Memory | None:
    return Memory.objects.filter(end_user=end_user).first()


def memory_runs(memory: Memory, limit: int = 20) -> QuerySet[MemoryRun]:
    return memory.runs.select_related("actor").order_by("-started_at", "-id")[:limit]


# --- Who is remembered: one definition and one keyset cursor for the tab and the API ---------


def memories_present(agent) -> QuerySet[Memory]:
    """A memory exists for readers while it has lines or records a stop; a deleted one is empty."""
    return Memory.objects.filter(agent=agent).filter(~Q(text="") | Q(stopped_at__isnull=False))


def memories_after(memories: QuerySet[Memory], at: datetime, pk: int) -> QuerySet[Memory]:
    """Those strictly after (at, pk) in newest-change-first order: the keyset step, served by the
    (agent, -updated_at, -id) index, never OFFSET."""
    return memories.filter(updated_at__lte=at).filter(Q(updated_at__lt=at) | Q(id__lt=pk))


def memory_cursor(memory: Memory) -> str:
    raw = f"{memory.updated_at.isoformat()}|{memory.pk}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def memory_cursor_decode(cursor: str) -> tuple[datetime, int]:
    """(updated_at, id) from a cursor made by `memory_cursor`, or AppError `invalid_cursor`."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        when, _, pk = raw.partition("|")
        at = parse_datetime(when)
        if at is None or timezone.is_naive(at):
            raise ValueError("not an aware time")
        return at, int(pk)
    except (ValueError, UnicodeDecodeError, binascii.Error, OverflowError):
        raise AppError("invalid_cursor", "That page link is not valid. Start again from the newest.", field="after") from None
