"""The R21 fields a memory row keeps beside its text (`Memory.external_id`, `last_chat_at`,
`agreed_at`, `conversations`), so a page of memories reads one table in one keyset scan.

They are counted from their sources when a row is made (`recount`), and moved by what changes
them, in the same transaction: a recorded message (`message_recorded`, called by
`surfaces.chat.record`, through which every message passes) moves `last_chat_at` (the person's own
message, as `agents.services` moves the end user's) and counts a conversation when it is that
conversation's first message; a consent answer (`consent.services.consent_changed`, received here)
sets `agreed_at`. A turn of a chat so costs one UPDATE of the row (the person's message), and reads
nothing of it. A person without a memory row has nothing to keep: memory.get reads their fields
from the sources (`selectors.api_memory_read`). `tests/memory/test_counters_property.py` checks the
fields equal a recount after any sequence of these.
"""

from collections import OrderedDict
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Case, Count, Exists, F, IntegerField, OuterRef, Subquery, Value, When
from django.db.models.functions import Coalesce

from agents.models import Conversation, EndUser, Message
from consent.models import Consent
from memory.models import Memory

COUNTED = ("last_chat_at", "agreed_at", "conversations")


def recounted() -> dict[str, Any]:
    """The fields as their sources say now, as expressions over a memory row's `end_user_id`."""
    chats = (
        Conversation.objects.filter(end_user_id=OuterRef("end_user_id"))
        .filter(Exists(Message.objects.filter(conversation_id=OuterRef("pk"))))
        .order_by()
        .values("end_user_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    agreed = Consent.objects.filter(end_user_id=OuterRef("end_user_id"), agreed_at__isnull=False).values("agreed_at")
    return {
        "last_chat_at": Subquery(EndUser.objects.filter(pk=OuterRef("end_user_id")).values("last_chat_at")[:1]),
        "agreed_at": Subquery(agreed[:1]),
        "conversations": Coalesce(Subquery(chats, output_field=IntegerField()), Value(0)),
    }


def recount(end_user_ids: Iterable[int]) -> None:
    """Count the fields of these end users' memory rows from their sources, in one UPDATE: a row
    just made. (Counting one that exists already changes nothing: its fields are kept right.)"""
    ids = list(end_user_ids)
    if ids:
        Memory.objects.filter(end_user_id__in=ids).update(**recounted())


# Conversations known to hold a message (committed: a message is never deleted, only erased with
# its conversation): an agent's reply there changes nothing of the row, and costs no statement.
_HOLDING: "OrderedDict[int, None]" = OrderedDict()
HOLDING_KEPT = 100_000
_SEEN = "_memory_counters_seen"  # on a conversation instance a message was recorded through


def _holds(conversation_id: int) -> None:
    _HOLDING[conversation_id] = None
    _HOLDING.move_to_end(conversation_id)
    while len(_HOLDING) > HOLDING_KEPT:
        _HOLDING.popitem(last=False)


def message_recorded(message: Message, conversation: Conversation, now: datetime) -> None:
    """A message was recorded (in the caller's transaction): the person's own moves `last_chat_at`;
    the first of its conversation counts the conversation. One UPDATE of their memory row for the
    person's message (matching none when they have no memory yet: it is counted when made); an
    agent's reply in a conversation known to hold a message, none."""
    known = conversation.__dict__.get(_SEEN) or conversation.pk in _HOLDING
    conversation.__dict__[_SEEN] = True
    transaction.on_commit(lambda: _holds(conversation.pk))
    first = ~Exists(Message.objects.filter(conversation_id=message.conversation_id).exclude(pk=message.pk))
    row = Memory.objects.filter(end_user_id=conversation.end_user_id)
    if message.kind != Message.Kind.USER:  # only a conversation's first message changes anything
        if not known:
            row.filter(first).update(conversations=F("conversations") + 1)
        return
    row.update(last_chat_at=now, conversations=F("conversations") + Case(When(first, then=Value(1)), default=Value(0)))


def consent_changed(sender: Any, *, end_user_id: int, agreed_at: datetime | None, **kwargs: Any) -> None:
    """`consent.services.consent_changed`'s receiver: their memory row's `agreed_at`, in the same
    transaction."""
    Memory.objects.filter(end_user_id=end_user_id).update(agreed_at=agreed_at)
