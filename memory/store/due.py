"""The quiet-window due queue: the one module that reads or writes `Conversation.memory_due_at`.

A conversation that uses memory is *due* once its quiet window has ended: each message marks it
(`mark`), the sweep finds due end users through the partial index on `memory_due_at` (`due_end_users`)
and claims them for a while so the next sweep does not queue them twice (`claim`), a run that read
everything clears them (`finish`), a failed run pushes them back (`defer`), and a stop, delete,
expiry or erase leaves nothing to read (`clear`). The column holds a time only; never a word.
"""

from datetime import datetime, timedelta

from django.db import transaction

from agents.models import Conversation

CLAIM_MINUTES = 5  # a swept end user is not swept again for this long unless its run clears it


def quiet_minutes(conversation: Conversation) -> int:
    return conversation.version.config["memorySettings"]["quietMinutes"]


def mark(conversation: Conversation, now: datetime) -> None:
    """A message or action in a conversation that uses memory: due when its quiet window ends.
    Sets the field on the instance; the caller saves it with the rest of the conversation."""
    if conversation.uses_memory:
        conversation.memory_due_at = now + timedelta(minutes=quiet_minutes(conversation))


def due_end_users(*, now: datetime, limit: int = 5000) -> list[int]:
    """End users (ids) with a conversation whose quiet window has ended, oldest first. Uses the
    partial index on memory_due_at; never a scan of all conversations."""
    rows = (
        Conversation.objects.filter(memory_due_at__lte=now)
        .order_by("memory_due_at")
        .values_list("end_user_id", flat=True)[:limit]
    )
    return list(dict.fromkeys(rows))


def claim(*, now: datetime, limit: int = 5000) -> list[int]:
    """The end users (ids) due at `now`, claimed for a run: their due rows are locked (skipping
    rows another sweep holds) and moved CLAIM_MINUTES past now in one transaction, so two sweeps
    running at once (two nodes) never queue the same end user, and the next sweep does not queue
    it again unless the run finishes it."""
    with transaction.atomic():
        claimed = list(
            Conversation.objects.select_for_update(skip_locked=True)
            .filter(memory_due_at__lte=now)
            .order_by("memory_due_at")
            .values_list("id", "end_user_id")[:limit]
        )
        Conversation.objects.filter(pk__in=[pk for pk, _ in claimed]).update(
            memory_due_at=now + timedelta(minutes=CLAIM_MINUTES)
        )
    return list(dict.fromkeys(end_user_id for _, end_user_id in claimed))


def clear(end_user_id: int) -> None:
    """Nothing of theirs is left to read (stop, delete, expiry, memory off): no longer due."""
    clear_many([end_user_id])


def clear_many(end_user_ids) -> None:
    Conversation.objects.filter(end_user_id__in=list(end_user_ids), memory_due_at__isnull=False).update(
        memory_due_at=None
    )


def finish(end_user_id: int, now: datetime, *, more_to_read: bool) -> None:
    """A run has answered the conversations whose quiet window ended; when it read only part of a
    long backlog they stay due (at `now`) so the next sweep reads on. Active chats stay as marked."""
    finish_many({end_user_id: more_to_read}, now)


def finish_many(more_to_read: dict[int, bool], now: datetime) -> None:
    """`finish` for several end users (id -> whether their run left more to read): one read, and
    one update per answer."""
    due = Conversation.objects.filter(end_user_id__in=list(more_to_read), memory_due_at__isnull=False)
    quiet: dict[bool, list[int]] = {True: [], False: []}
    for pk, end_user_id, last_activity, config in due.values_list(
        "id", "end_user_id", "last_activity_at", "version__config"
    ):
        if last_activity + timedelta(minutes=config["memorySettings"]["quietMinutes"]) <= now:
            quiet[more_to_read[end_user_id]].append(pk)
    for more, pks in quiet.items():
        if pks:
            Conversation.objects.filter(pk__in=pks).update(memory_due_at=now if more else None)


def defer(end_user_id: int, until: datetime | None) -> None:
    """A failed run: try again at `until` (backoff), or not until their next chat (None)."""
    Conversation.objects.filter(end_user_id=end_user_id, memory_due_at__isnull=False).update(memory_due_at=until)


def active_conversations(end_user_id: int, now: datetime) -> list[int]:
    """Their conversations still inside the quiet window (not to be read yet, R11)."""
    return active_conversations_many([end_user_id], now).get(end_user_id, [])


def active_conversations_many(end_user_ids, now: datetime) -> dict[int, list[int]]:
    """`active_conversations` of several end users in one read: id -> their active chats' ids
    (an end user with none is absent)."""
    active: dict[int, list[int]] = {}
    for conversation_id, end_user_id, last_activity, config in Conversation.objects.filter(
        end_user_id__in=list(end_user_ids), uses_memory=True, memory_due_at__isnull=False
    ).values_list("id", "end_user_id", "last_activity_at", "version__config"):
        if last_activity + timedelta(minutes=config["memorySettings"]["quietMinutes"]) > now:
            active.setdefault(end_user_id, []).append(conversation_id)
    return active
