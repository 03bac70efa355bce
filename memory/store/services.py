"""Writes to memories. Every path that changes a memory's text goes through this module and the
guards in `policy`, and leaves an audit row (MemoryRun) with counts, never words."""

import logging
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import F, Q
from django.utils import timezone

from agents.models import Agent, AgentVersion, Conversation, EndUser
from memory import guards as policy
from memory.models import Memory, MemoryRun
from memory.store import due
from memory.store.commit import memory_commit, memory_locked
from memory.store.events import end_user_erased
from memory.store.note import memory_at_start
from memory.store.selectors import memory_of
from memory.store.version import version_of

log = logging.getLogger(__name__)

CLAIM_MINUTES = due.CLAIM_MINUTES
MEMORY_OFF_GRACE_DAYS = 30  # R4
MadeOn = str | Collection[str] | None  # the version(s) a person's write was made on (memory.store.version)


def stopped_gate(*, agent: Agent, end_user: EndUser, settings: dict, source: str) -> str | None:
    """A stopped memory is never read or written: conversations start without it (R20)."""
    memory = memory_at_start(end_user)  # read once: the note reuses it (one query per start)
    return Conversation.MemoryOff.STOPPED if memory is not None and memory.stopped_at is not None else None


# --- Direct edits: the team (Memory tab), the API, the end user's own requests ----------
# Each goes through `commit.memory_locked` + `commit.memory_commit`: the row lock, the audit row,
# the due queue and the chats' notes are that module's, not each path's.


CHANGED = "This memory changed since you opened it. Here it is as it is now; try again."
PLAN_REQUIRED = "Memory comes with the Team plan and up."
MEMORY_OFF = (
    "Memory is off for this agent: turn it on and publish before writing a memory. "
    "You can still delete a line or the memory, stop, or erase."
)


def memory_write_refusal(agent: Agent) -> policy.MemoryRefused | None:
    """Why nothing may be written into this agent's memories now, or None: a plan without memory
    (R3, `plan_required`), or memory off in the published version (R4, `memory_off`; also when it
    was never on). Deleting, stopping and erasing are never refused: they only take away."""
    if not agent.team.has_memory:
        return policy.MemoryRefused("plan_required", PLAN_REQUIRED)
    if not AgentVersion.objects.published(agent).config["memorySettings"]["on"]:
        return policy.MemoryRefused("memory_off", MEMORY_OFF)
    return None


def _refuse_writes_where_memory_is_not_on(end_user: EndUser) -> None:
    refusal = memory_write_refusal(end_user.agent)
    if refusal is not None:
        raise refusal


def _refuse_if_changed(memory: Memory, made_on: MadeOn) -> None:
    """Compare-and-set: `made_on` is the version (or the versions) the write was made on; None
    accepts whatever the memory reads (the API without If-Match: last write wins)."""
    if made_on is None:
        return
    accepted = {made_on} if isinstance(made_on, str) else set(made_on)
    if version_of(memory) not in accepted:
        raise policy.MemoryRefused("changed", CHANGED)


def _refuse_if_stopped(memory: Memory) -> None:
    if memory.stopped_at is not None:
        raise policy.MemoryRefused("stopped", "This person asked to stop being remembered. Resume memory first.")


def memory_set(
    *,
    end_user: EndUser,
    text: str,
    kind: str = MemoryRun.Kind.TEAM_EDIT,
    actor=None,
    made_on: MadeOn = None,
    now=None,
) -> Memory:
    """Replace the whole memory with `text` (R20 set). Refuses (policy.MemoryRefused, nothing
    changed) more than 30 lines or any line that looks like a password, key, card or id (R7); a
    plan without memory or memory off (`memory_write_refusal`); a memory that no longer reads the
    version `made_on` ("changed", checked under the row lock). A stopped memory cannot be
    written: resume it first."""
    now = now or timezone.now()
    _refuse_writes_where_memory_is_not_on(end_user)
    lines = policy.check_memory_text(text)
    with memory_locked(end_user, now) as memory:
        _refuse_if_changed(memory, made_on)
        _refuse_if_stopped(memory)
        memory_commit(memory, now=now, kind=kind, lines=lines, actor=actor)
    return memory


@dataclass(frozen=True)
class LineAdded:
    memory: Memory
    number: int  # the line's 1-based number in the memory as committed
    changed_meanwhile: bool  # the memory no longer read the version the add was made on


def memory_line_add(*, end_user: EndUser, text: str, actor=None, made_on: str | None = None, now=None) -> LineAdded:
    """Add one line at the end of the memory, under the row lock: the lines are read after the
    lock is taken, so two adds at once both land (neither is lost) and each answers its own line
    number. An add never overwrites what another writer did, so a memory changed since `made_on`
    still takes it (`changed_meanwhile` says so). The same guards as a whole set."""
    now = now or timezone.now()
    _refuse_writes_where_memory_is_not_on(end_user)
    policy.check_memory_text(text)  # the line alone first: its refusal names it, not line N
    with memory_locked(end_user, now) as memory:
        _refuse_if_stopped(memory)
        changed = made_on is not None and version_of(memory) != made_on
        lines = policy.check_memory_text("\n".join([*memory.lines, text]))
        memory_commit(memory, now=now, kind=MemoryRun.Kind.TEAM_EDIT, lines=lines, actor=actor)
    return LineAdded(memory=memory, number=len(lines), changed_meanwhile=changed)


def _line_change(
    *, end_user: EndUser, index: int, was: str | None, change, kind: str, actor, made_on: MadeOn, gated: bool, now
) -> Memory:
    """Change one line under the row lock. `was` is the line as the editor saw it and `made_on`
    the version of the memory the edit was made on: when the memory no longer reads that (a
    writer run, an Apply or another editor changed it meanwhile) the edit is refused ("changed")
    and the memory stays exactly as the other writer left it. The comparison happens after the
    lock is taken, so no write can slip between check and commit."""
    now = now or timezone.now()
    if gated:
        _refuse_writes_where_memory_is_not_on(end_user)
    with memory_locked(end_user, now) as memory:
        lines = memory.lines
        if was is not None and (not 1 <= index <= len(lines) or lines[index - 1] != was):
            raise policy.MemoryRefused("changed", CHANGED, index)
        _refuse_if_changed(memory, made_on)
        if not 1 <= index <= len(lines):
            raise policy.MemoryRefused("no_such_line", f"There is no line {index}.")
        _refuse_if_stopped(memory)
        checked = policy.check_memory_text("\n".join(change(lines)))
        memory_commit(memory, now=now, kind=kind, lines=checked, actor=actor)
    return memory


def memory_line_replace(
    *, end_user: EndUser, index: int, text: str, was: str | None, actor=None, made_on: MadeOn = None, now=None
) -> Memory:
    """Correct one line (1-based `index`) that still reads `was` (None: whatever it reads) in a
    memory that still reads `made_on` (None: whatever it reads); the same guards as a whole set,
    memory on included. Refuses a changed line or memory, a stopped memory or a refused text,
    changing nothing."""

    def replace(lines: list[str]) -> list[str]:
        lines[index - 1] = text
        return lines

    return _line_change(
        end_user=end_user,
        index=index,
        was=was,
        change=replace,
        kind=MemoryRun.Kind.TEAM_EDIT,
        actor=actor,
        made_on=made_on,
        gated=True,
        now=now,
    )


def memory_line_delete(
    *,
    end_user: EndUser,
    index: int,
    was: str | None,
    actor=None,
    kind=MemoryRun.Kind.TEAM_EDIT,
    made_on: MadeOn = None,
    now=None,
) -> Memory:
    """Delete one line (1-based `index`) that still reads `was` (None: whatever it reads), in a
    memory that still reads `made_on` (None: whatever it reads). Allowed with memory off or on a
    plan without memory: it only takes away."""

    def delete(lines: list[str]) -> list[str]:
        del lines[index - 1]
        return lines

    return _line_change(
        end_user=end_user,
        index=index,
        was=was,
        change=delete,
        kind=kind,
        actor=actor,
        made_on=made_on,
        gated=False,
        now=now,
    )


def memory_delete(
    *, end_user: EndUser, kind: str = MemoryRun.Kind.TEAM_EDIT, actor=None, made_on: MadeOn = None, now=None
) -> Memory:
    """Empty the memory and start a new horizon at now: `read_up_to` moves to now, so no older
    chat can bring a line back (R20). Its run rows keep counts only; nothing of its words survives.
    Refused ("changed", nothing changed) only when `made_on` is given and the memory no longer
    reads it; never for memory off or the plan."""
    now = now or timezone.now()
    with memory_locked(end_user, now) as memory:
        _refuse_if_changed(memory, made_on)
        memory_commit(memory, now=now, kind=kind, lines=[], horizon=True, actor=actor, due_state="clear")
    return memory


def memory_stop(
    *, end_user: EndUser, stop: bool = True, kind: str = MemoryRun.Kind.TEAM_EDIT, actor=None, now=None
) -> Memory:
    """`stop=True`: they asked to stop: emptied, read_up_to moved to now, nothing more kept, and
    new chats do not use memory. `stop=False`: they changed their mind; memory resumes from now."""
    now = now or timezone.now()
    with memory_locked(end_user, now) as memory:
        if stop or memory.stopped_at is not None:
            memory_commit(memory, now=now, kind=kind, stopped=stop, actor=actor)
    return memory


def end_user_erase(*, end_user: EndUser) -> dict[str, int]:
    """The memory and everything else on that agent about that end user: conversations,
    messages, action runs, consent, runs, the memory row itself with its horizon (R20).
    Cascades in one statement tree. Returns what it removed, counted per kind."""
    memory = memory_of(end_user)
    lines = len(memory.lines) if memory else 0
    _, per_model = end_user.delete()
    names = {
        "memory.Memory": "memories",
        "memory.MemoryRun": "memoryRuns",
        "agents.Conversation": "conversations",
        "agents.Message": "messages",
        "agents.ActionRun": "actions",
        "consent.Consent": "consents",
        "agents.EndUser": "endUsers",
    }
    counts = {name: per_model.get(model, 0) for model, name in names.items()}
    counts["lines"] = lines
    end_user_erased.send(sender=EndUser, agent=end_user.agent, external_id=end_user.external_id, removed=counts)
    return counts


# --- The quiet-window sweep and retention -----------------------------------------------


def _expired(agent: Agent, now: datetime):
    """The agent's memories whose time is up, as a queryset, whatever their history: those holding
    lines, or chats not yet read, whose

    - keepForDays has passed, counted from the end user's last chat, or from the memory's last
      change when they never chatted (R4's "how long to keep it");
    - or, where memory is not in use (off in the published version, or a plan without memory):
      30 days have passed since it was turned off (R4), or, when it never was on or the plan
      took memory away (no switch to count from), since the memory's last change."""
    memories = Memory.objects.filter(agent=agent)
    holds_something = (
        ~Q(text="")
        | Q(read_up_to__isnull=True, end_user__last_chat_at__isnull=False)
        | Q(read_up_to__lt=F("end_user__last_chat_at"))
    )
    config = AgentVersion.objects.published(agent).config
    cutoff = now - timedelta(days=config["memorySettings"]["keepForDays"])
    time_is_up = Q(end_user__last_chat_at__lt=cutoff) | Q(end_user__last_chat_at__isnull=True, updated_at__lt=cutoff)
    if not (config["memorySettings"]["on"] and agent.team.has_memory):
        off_cutoff = now - timedelta(days=MEMORY_OFF_GRACE_DAYS)
        if agent.memory_off_since is not None:
            if agent.memory_off_since < off_cutoff:
                return memories.filter(holds_something)
        else:
            time_is_up |= Q(updated_at__lt=off_cutoff)
    return memories.filter(holds_something).filter(time_is_up)


def memory_expire(*, memory_id: int, now: datetime) -> bool:
    """Empty one memory whose time is up and start a new horizon at `now`: what it had read, and a
    stop, survive (the row stays), so no chat from before the expiry can ever bring a line back.
    Checked again under the row lock (they may have chatted since). Returns whether it expired."""
    memory = Memory.objects.select_related("end_user", "agent__team").filter(pk=memory_id).first()
    if memory is None:
        return False
    with memory_locked(memory.end_user, now) as locked:
        if not _expired(memory.agent, now).filter(pk=memory_id).exists():
            return False
        memory_commit(locked, now=now, kind=MemoryRun.Kind.RETENTION, lines=[], horizon=True, run={}, due_state="clear")
    return True


def memory_retention_sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Retention, once (the daily schedule and `manage.py memory_retention`): every memory whose
    keepForDays has passed (from the last chat, or from its last change when there was no chat),
    every memory of an agent whose memory has been off for over 30 days (R4), and every memory
    untouched for 30 days on an agent whose memory never was on or whose plan has no memory, is
    emptied with a new horizon (`memory_expire`, rules in `_expired`). The rows stay, empty: a stop and what was read survive; the
    words do not. Returns counts."""
    now = now or timezone.now()
    expired = 0
    for agent in Agent.objects.filter(memories__isnull=False).distinct().select_related("team").order_by("pk"):
        for memory_id in list(_expired(agent, now).values_list("pk", flat=True)):
            expired += memory_expire(memory_id=memory_id, now=now)
    return {"expired": expired}
