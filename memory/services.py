"""Writes to memories. Every path that changes a memory's text goes through this module and the
guards in `policy`, and leaves an audit row (MemoryRun) with counts, never words."""
import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from agents.models import Agent, Conversation, EndUser

from . import policy
from .models import Memory, MemoryRun
from .writer import memory_row_for, run_quiet_window

log = logging.getLogger(__name__)

CLAIM_MINUTES = 5  # a swept end user is not swept again for this long unless its run clears it
MEMORY_OFF_GRACE_DAYS = 30  # R4


def stopped_gate(*, agent: Agent, end_user: EndUser, settings: dict, source: str) -> str | None:
    """A stopped memory is never read or written: conversations start without it (R20)."""
    stopped = Memory.objects.filter(end_user=end_user, stopped_at__isnull=False).exists()
    return Conversation.MemoryOff.STOPPED if stopped else None


# --- Direct edits: the team (Memory tab), the API, the end user's own requests ----------


def _audit(memory: Memory, *, kind: str, before: list[str], after: list[str], actor=None, now: datetime) -> MemoryRun:
    before_set, after_set = set(before), set(after)
    removed = len([line for line in before if line not in after_set])
    added = len([line for line in after if line not in before_set])
    replaced = min(added, removed)
    return MemoryRun.objects.create(
        memory=memory,
        kind=kind,
        status=MemoryRun.Status.SUCCEEDED,
        added=added - replaced,
        replaced=replaced,
        removed=removed - replaced,
        started_at=now,
        actor=actor,
    )


@transaction.atomic
def memory_set(*, end_user: EndUser, text: str, kind: str = MemoryRun.Kind.TEAM_EDIT, actor=None, now=None) -> Memory:
    """Replace the whole memory with `text` (R20 set). Refuses (policy.MemoryRefused, nothing
    changed) more than 30 lines or any line that looks like a password, key, card or id (R7).
    A stopped memory cannot be written: resume it first."""
    now = now or timezone.now()
    lines = policy.check_memory_text(text)
    memory = Memory.objects.select_for_update().get(pk=memory_row_for(end_user, now).pk)
    if memory.stopped_at is not None:
        raise policy.MemoryRefused("stopped", "This person asked to stop being remembered. Resume memory first.")
    before = memory.lines
    memory.text = "\n".join(lines)
    memory.updated_at = now
    memory.save(update_fields=["text", "updated_at"])
    _audit(memory, kind=kind, before=before, after=lines, actor=actor, now=now)
    return memory


def memory_line_replace(*, memory: Memory, index: int, text: str, actor=None, now=None) -> Memory:
    """Correct one line (1-based `index`); the same guards as a whole set."""
    lines = memory.lines
    if not 1 <= index <= len(lines):
        raise policy.MemoryRefused("no_such_line", f"There is no line {index}.")
    lines[index - 1] = text
    return memory_set(end_user=memory.end_user, text="\n".join(lines), actor=actor, now=now)


def memory_line_delete(*, memory: Memory, index: int, actor=None, kind=MemoryRun.Kind.TEAM_EDIT, now=None) -> Memory:
    lines = memory.lines
    if not 1 <= index <= len(lines):
        raise policy.MemoryRefused("no_such_line", f"There is no line {index}.")
    del lines[index - 1]
    return memory_set(end_user=memory.end_user, text="\n".join(lines), kind=kind, actor=actor, now=now)


@transaction.atomic
def memory_delete(*, end_user: EndUser, actor=None, now=None) -> None:
    """Empty the memory and move `read_up_to` to now, so no older chat can bring a line back
    (R20). Its run rows keep counts only; nothing of its words survives."""
    now = now or timezone.now()
    memory = Memory.objects.select_for_update().get(pk=memory_row_for(end_user, now).pk)
    memory.text = ""
    memory.read_up_to = now
    memory.updated_at = now
    memory.last_run = None
    memory.save(update_fields=["text", "read_up_to", "updated_at", "last_run"])
    Conversation.objects.filter(end_user=end_user, memory_due_at__isnull=False).update(memory_due_at=None)


@transaction.atomic
def memory_stop(*, end_user: EndUser, stop: bool = True, kind: str = MemoryRun.Kind.TEAM_EDIT, actor=None, now=None) -> Memory:
    """`stop=True`: they asked to stop: emptied, read_up_to moved to now, nothing more kept, and
    new chats do not use memory. `stop=False`: they changed their mind; memory resumes from now."""
    now = now or timezone.now()
    memory = Memory.objects.select_for_update().get(pk=memory_row_for(end_user, now).pk)
    if stop:
        before = memory.lines
        memory.text = ""
        memory.stopped_at = memory.stopped_at or now
        memory.read_up_to = now
        memory.updated_at = now
        memory.save(update_fields=["text", "stopped_at", "read_up_to", "updated_at"])
        Conversation.objects.filter(end_user=end_user, memory_due_at__isnull=False).update(memory_due_at=None)
        if before:
            _audit(memory, kind=kind, before=before, after=[], actor=actor, now=now)
    elif memory.stopped_at is not None:
        memory.stopped_at = None
        memory.read_up_to = now
        memory.updated_at = now
        memory.save(update_fields=["stopped_at", "read_up_to", "updated_at"])
    return memory


def end_user_erase(*, end_user: EndUser) -> None:
    """The memory and everything else on that agent about that end user: conversations,
    messages, action runs, consent, runs (R20). Cascades in one statement tree."""
    end_user.delete()


# --- The quiet-window sweep and retention -----------------------------------------------


def memory_sweep(*, now: datetime | None = None, run_inline: bool = False, limit: int = 5000) -> list[int]:
    """Find end users whose quiet window has ended (through the memory_due_at index), claim them
    for CLAIM_MINUTES so the next sweep does not queue them again, and queue one run each (task
    arguments are ids only). With `run_inline`, run them here instead, with `now` as the time."""
    from django_q.tasks import async_task

    now = now or timezone.now()
    from .selectors import conversation_due_for_memory

    end_user_ids = conversation_due_for_memory(now=now, limit=limit)
    if not end_user_ids:
        return []
    if run_inline:
        for end_user_id in end_user_ids:
            run_quiet_window(end_user_id=end_user_id, now=now)
        return end_user_ids
    Conversation.objects.filter(end_user_id__in=end_user_ids, memory_due_at__lte=now).update(
        memory_due_at=now + timedelta(minutes=CLAIM_MINUTES)
    )
    for end_user_id in end_user_ids:
        async_task("memory.tasks.run_quiet_window", end_user_id, group="memory-quiet")
    return end_user_ids


def memory_retention_sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Delete memories whose end user's last chat is older than the agent's keepForDays, and every
    memory of an agent whose memory has been off for over 30 days (R4). Returns counts."""
    now = now or timezone.now()
    expired = 0
    for agent in Agent.objects.filter(memories__isnull=False).distinct():
        settings = agent.versions.order_by("-number").values_list("config", flat=True).first()["memorySettings"]
        if agent.memory_off_since and agent.memory_off_since < now - timedelta(days=MEMORY_OFF_GRACE_DAYS):
            _, per_model = Memory.objects.filter(agent=agent).delete()
            expired += per_model.get("memory.Memory", 0)
            continue
        cutoff = now - timedelta(days=settings["keepForDays"])
        _, per_model = Memory.objects.filter(agent=agent, end_user__last_chat_at__lt=cutoff).delete()
        expired += per_model.get("memory.Memory", 0)
    return {"deleted": expired}
