"""The memory's actions: one function per thing that can happen to a memory, each saying what it
did (memory.store.events), each through the guards of its path and the row lock.

The team (Memory tab), the API and the end user's own requests call the actions that lock the row
themselves (`memory_set`, `memory_line_edit`, `memory_stop`, ...). The writer and Apply plan
changes of rows they locked together (`plan_run`, `plan_apply`, ...) and commit them as one batch
(`memory.store.rows.commit_changes`). Every change is planned on the locked row by a `_Draft`
and written by `commit_changes`: the audit row (counts, never words), the due queue, the chats'
notes and the event are that function's, not each action's.

The invariant they keep with the writer: no chat from before a stop, delete, expiry (a new
*horizon*: `read_up_to` moves to that moment) or forget (`forget_pending` until read past) ever
adds a line; `read_up_to` only moves forward.
"""

from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from django.utils import timezone

from agents.models import Agent, AgentVersion, EndUser
from memory import guards as policy
from memory.models import Memory, MemoryRun
from memory.store import events
from memory.store.rows import DueAnswer, MemoryChange, commit_changes, memory_locked
from memory.store.selectors import memories_expired, memory_of
from memory.store.version import version_of


class Actor(Protocol):
    """Who made a person's change: a team member (the Memory tab), or no one (the API, the end user)."""

    pk: Any


MadeOn = str | Collection[str] | None  # the version(s) a person's write was made on (memory.store.version)
RETRY_BACKOFF_MINUTES = (1, 5, 15)  # after a failed run; then the failure shows on the Memory tab
CHANGED = "This memory changed since you opened it. Here it is as it is now; try again."
PLAN_REQUIRED = "Memory comes with the Team plan and up."
MEMORY_OFF = (
    "Memory is off for this agent: turn it on and publish before writing a memory. "
    "You can still delete a line or the memory, stop, or erase."
)


# --- Planning a change on a locked row -------------------------------------------------------


class _Draft:
    """The new values of one locked row, the fields they touch, and what the change did."""

    def __init__(self, memory: Memory, *, now: datetime):
        self.memory, self.now = memory, now
        self.before, self.text_before = memory.lines, memory.text
        self.was_stopped = memory.stopped_at is not None
        self.fields: set[str] = set()
        self.horizon = False

    def put(self, name: str, value: Any) -> None:
        setattr(self.memory, name, value)
        self.fields.add(name)

    def lines(self, lines: list[str]) -> None:
        if "\n".join(lines) != self.memory.text:
            self.put("text", "\n".join(lines))

    def read_to(self, at: datetime | None) -> None:
        """`read_up_to` moves forward only, never back."""
        if at is not None and (self.memory.read_up_to is None or at > self.memory.read_up_to):
            self.put("read_up_to", at)

    def new_horizon(self) -> None:
        """A new life starts now: nothing said before it is read, no forget is pending."""
        self.horizon = True
        self.put("horizon_at", self.now)
        self.put("forget_pending", None)
        self.read_to(self.now)

    def forget_read_past(self) -> None:
        """The chats before a pending forget are read: it goes, and Try replays only what came after it."""
        pending = self.memory.forget_pending
        if pending:
            forget_at = datetime.fromisoformat(pending["before"])
            if self.memory.horizon_at is None or forget_at > self.memory.horizon_at:
                self.put("horizon_at", forget_at)
        self.put("forget_pending", None)

    def counts(self) -> events.LineCounts:
        return events.LineCounts.between(self.before, self.memory.lines)

    def change(
        self,
        kind: events.Kind,
        *,
        audit: "Audit | None" = None,
        due: DueAnswer | None = None,
    ) -> MemoryChange:
        """The planned change; `audit`: the audit row it writes, also when no line changed."""
        memory, counts = self.memory, self.counts()
        if self.horizon and not memory.text:
            self.put("last_run", None)
        if self.fields & {"text", "stopped_at"} or self.horizon:
            self.put("updated_at", self.now)
        return MemoryChange(
            memory=memory,
            kind=kind,
            fields=set(self.fields),
            counts=counts,
            text_changed=memory.text != self.text_before,
            was_stopped=self.was_stopped,
            run=audit.row(memory, counts, self.now) if audit is not None else None,
            due=due,
        )

    def edit(
        self, kind: events.Kind, *, source: str, actor_id: int | None, due: DueAnswer | None = None
    ) -> MemoryChange:
        """A change made by a person: its audit row only when a line changed."""
        audit = Audit(kind=source, actor_id=actor_id) if self.counts().any() else None
        return self.change(kind, audit=audit, due=due)


@dataclass(frozen=True)
class Audit:
    """An audit row's fields beside its line counts (`MemoryRun`): who or what, timings, tokens,
    what the guards dropped. Counts only, never words."""

    kind: str  # MemoryRun.Kind
    status: str = MemoryRun.Status.SUCCEEDED
    actor_id: int | None = None
    engine: str = ""
    error: str = ""
    attempt: int = 1
    dropped: dict[str, int] = field(default_factory=dict)
    messages_read: int = 0
    actions_read: int = 0
    read_from: datetime | None = None
    read_to: datetime | None = None
    duration_ms: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def row(self, memory: Memory, counts: events.LineCounts, now: datetime) -> MemoryRun:
        if self.status == MemoryRun.Status.FAILED:
            counts = events.LineCounts()  # a failed run changed nothing
        values = {**asdict(self), "error": self.error[:200]}
        return MemoryRun(memory=memory, started_at=now, **counts.as_dict(), **values)


def _actor_id(actor: Actor | None) -> int | None:
    return actor.pk if actor is not None else None


# --- The gates of a person's write ----------------------------------------------------------


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


# --- A person's writes: the team (Memory tab), the API, the end user's own requests -----------


def memory_set(
    *,
    end_user: EndUser,
    text: str,
    kind: str = MemoryRun.Kind.TEAM_EDIT,
    actor: Actor | None = None,
    made_on: MadeOn = None,
    now: datetime | None = None,
) -> Memory:
    """Replace the whole memory with `text` (R20 set). Refuses (policy.MemoryRefused, nothing
    changed) more than 30 lines or any line that looks like a password, key, card or id (R7); a
    plan without memory or memory off (`memory_write_refusal`); a memory that no longer reads the
    version `made_on` ("changed", checked under the row lock). A stopped memory cannot be
    written: resume it first. Event: "set", when the text changed."""
    now = now or timezone.now()
    _refuse_writes_where_memory_is_not_on(end_user)
    lines = policy.check_memory_text(text)
    with memory_locked(end_user, now) as memory:
        _refuse_if_changed(memory, made_on)
        _refuse_if_stopped(memory)
        draft = _Draft(memory, now=now)
        draft.lines(lines)
        commit_changes([draft.edit("set", source=kind, actor_id=_actor_id(actor))], now=now)
    return memory


@dataclass(frozen=True)
class LineAdded:
    memory: Memory
    number: int  # the line's 1-based number in the memory as committed
    changed_meanwhile: bool  # the memory no longer read the version the add was made on


def memory_line_add(
    *, end_user: EndUser, text: str, actor: Actor | None = None, made_on: str | None = None, now: datetime | None = None
) -> LineAdded:
    """Add one line at the end of the memory, under the row lock: the lines are read after the
    lock is taken, so two adds at once both land (neither is lost) and each answers its own line
    number. An add never overwrites what another writer did, so a memory changed since `made_on`
    still takes it (`changed_meanwhile` says so). The same guards as a whole set. Event: "edited"."""
    now = now or timezone.now()
    _refuse_writes_where_memory_is_not_on(end_user)
    policy.check_memory_text(text)  # the line alone first: its refusal names it, not line N
    with memory_locked(end_user, now) as memory:
        _refuse_if_stopped(memory)
        changed = made_on is not None and version_of(memory) != made_on
        lines = policy.check_memory_text("\n".join([*memory.lines, text]))
        draft = _Draft(memory, now=now)
        draft.lines(lines)
        commit_changes([draft.edit("edited", source=MemoryRun.Kind.TEAM_EDIT, actor_id=_actor_id(actor))], now=now)
    return LineAdded(memory=memory, number=len(lines), changed_meanwhile=changed)


def _line_lines(memory: Memory, *, index: int, was: str | None, made_on: MadeOn) -> list[str]:
    """The locked memory's lines, when line `index` (1-based) still reads `was` (None: whatever it
    reads) and the memory still reads `made_on`: else the edit is refused ("changed") and the memory
    stays exactly as the other writer (a run, an Apply, another editor) left it."""
    lines = memory.lines
    if was is not None and (not 1 <= index <= len(lines) or lines[index - 1] != was):
        raise policy.MemoryRefused("changed", CHANGED, index)
    _refuse_if_changed(memory, made_on)
    if not 1 <= index <= len(lines):
        raise policy.MemoryRefused("no_such_line", f"There is no line {index}.")
    _refuse_if_stopped(memory)
    return lines


def memory_line_edit(
    *,
    end_user: EndUser,
    index: int,
    text: str,
    was: str | None,
    actor: Actor | None = None,
    made_on: MadeOn = None,
    now: datetime | None = None,
) -> Memory:
    """Correct one line (1-based `index`) that still reads `was` in a memory that still reads
    `made_on` (`_line_lines`, compared under the row lock, so no write slips between check and
    commit); the same guards as a whole set, memory on included. Refuses a changed line or
    memory, a stopped memory or a refused text, changing nothing. Event: "edited"."""
    now = now or timezone.now()
    _refuse_writes_where_memory_is_not_on(end_user)
    with memory_locked(end_user, now) as memory:
        lines = _line_lines(memory, index=index, was=was, made_on=made_on)
        lines[index - 1] = text
        draft = _Draft(memory, now=now)
        draft.lines(policy.check_memory_text("\n".join(lines)))
        commit_changes([draft.edit("edited", source=MemoryRun.Kind.TEAM_EDIT, actor_id=_actor_id(actor))], now=now)
    return memory


def memory_line_delete(
    *,
    end_user: EndUser,
    index: int,
    was: str | None,
    actor: Actor | None = None,
    kind: str = MemoryRun.Kind.TEAM_EDIT,
    made_on: MadeOn = None,
    now: datetime | None = None,
) -> Memory:
    """Delete one line (1-based `index`) that still reads `was` in a memory that still reads
    `made_on` (`_line_lines`). Allowed with memory off or on a plan without memory: it only takes
    away. Event: "edited"."""
    now = now or timezone.now()
    with memory_locked(end_user, now) as memory:
        lines = _line_lines(memory, index=index, was=was, made_on=made_on)
        del lines[index - 1]
        draft = _Draft(memory, now=now)
        draft.lines(policy.check_memory_text("\n".join(lines)))
        commit_changes([draft.edit("edited", source=kind, actor_id=_actor_id(actor))], now=now)
    return memory


def memory_delete(
    *,
    end_user: EndUser,
    kind: str = MemoryRun.Kind.TEAM_EDIT,
    actor: Actor | None = None,
    made_on: MadeOn = None,
    now: datetime | None = None,
) -> Memory:
    """Empty the memory and start a new horizon at now: `read_up_to` moves to now, so no older
    chat can bring a line back (R20). Its run rows keep counts only; nothing of its words survives.
    Refused ("changed", nothing changed) only when `made_on` is given and the memory no longer
    reads it; never for memory off or the plan. Event: "deleted"."""
    now = now or timezone.now()
    with memory_locked(end_user, now) as memory:
        _refuse_if_changed(memory, made_on)
        draft = _Draft(memory, now=now)
        draft.lines([])
        draft.new_horizon()
        change = draft.edit("deleted", source=kind, actor_id=_actor_id(actor), due=DueAnswer("clear"))
        commit_changes([change], now=now)
    return memory


def memory_stop(
    *, end_user: EndUser, kind: str = MemoryRun.Kind.TEAM_EDIT, actor: Actor | None = None, now: datetime | None = None
) -> Memory:
    """They asked to stop: emptied, `read_up_to` moved to now, nothing more kept, and new chats do
    not use memory (R20). A memory already stopped starts its horizon again. Event: "stopped"."""
    now = now or timezone.now()
    with memory_locked(end_user, now) as memory:
        draft = _Draft(memory, now=now)
        draft.lines([])
        if memory.stopped_at is None:
            draft.put("stopped_at", now)
        draft.new_horizon()
        change = draft.edit("stopped", source=kind, actor_id=_actor_id(actor), due=DueAnswer("clear"))
        commit_changes([change], now=now)
    return memory


def memory_resume(
    *, end_user: EndUser, kind: str = MemoryRun.Kind.TEAM_EDIT, actor: Actor | None = None, now: datetime | None = None
) -> Memory:
    """They changed their mind: memory resumes from now (nothing said while it was stopped, or
    before, is read). A memory that is not stopped is left as it is. Event: "resumed"."""
    now = now or timezone.now()
    with memory_locked(end_user, now) as memory:
        if memory.stopped_at is not None:
            draft = _Draft(memory, now=now)
            draft.put("stopped_at", None)
            draft.new_horizon()
            commit_changes([draft.edit("resumed", source=kind, actor_id=_actor_id(actor))], now=now)
    return memory


def memory_forget(*, memory: Memory, kept: list[str], removed: list[str], pending: dict, now: datetime) -> None:
    """An end user's "forget that ..." on their memory, locked by the caller: the lines `kept`
    stay, and their chats not yet read are read later with `pending` (`Memory.forget_pending`)
    excluded, so nothing from before the forget brings it back. An audit row (kind
    `end_user_request`) when a line about it was `removed`. Event: "forgotten"."""
    draft = _Draft(memory, now=now)
    draft.lines(kept)
    draft.put("forget_pending", pending)
    audit = Audit(kind=MemoryRun.Kind.END_USER_REQUEST) if removed and draft.counts().any() else None
    commit_changes([draft.change("forgotten", audit=audit)], now=now)


def end_user_erase(*, end_user: EndUser) -> dict[str, int]:
    """The memory and everything else on that agent about that end user: conversations,
    messages, action runs, consent, runs, the memory row itself with its horizon (R20).
    Cascades in one statement tree. Returns what it removed, counted per kind. Event:
    `end_user_erased`."""
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
    events.end_user_erased.send(sender=EndUser, agent=end_user.agent, external_id=end_user.external_id, removed=counts)
    return counts


# --- Retention ------------------------------------------------------------------------------


def memory_expire(*, memory_id: int, now: datetime) -> bool:
    """Empty one memory whose time is up (`selectors.memories_expired`) and start a new horizon at
    `now`: what it had read, and a stop, survive (the row stays), so no chat from before the expiry
    can ever bring a line back. Checked again under the row lock (they may have chatted since).
    Returns whether it expired. Event: "expired", with an audit row (kind `retention`)."""
    memory = Memory.objects.select_related("end_user", "agent__team").filter(pk=memory_id).first()
    if memory is None:
        return False
    with memory_locked(memory.end_user, now) as locked:
        if not memories_expired(memory.agent, now).filter(pk=memory_id).exists():
            return False
        draft = _Draft(locked, now=now)
        draft.lines([])
        draft.new_horizon()
        change = draft.change("expired", audit=Audit(kind=MemoryRun.Kind.RETENTION), due=DueAnswer("clear"))
        commit_changes([change], now=now)
    return True


# --- The quiet-window writer ----------------------------------------------------------------


def plan_run(
    *,
    memory: Memory,
    lines: list[str],
    audit: Audit,
    read_past_forget: bool = False,
    more_to_read: bool = False,
    now: datetime,
) -> MemoryChange:
    """A quiet-window run's change of a locked row that still reads what the run read: the new
    lines (already through the guards), read up to `audit.read_to`, its pending forget let go when
    the run read past it, the last run's counts, no failure; the due chats answered (perhaps with
    more to read). Event: "run" (also when no line changed: the run read their chats)."""
    draft = _Draft(memory, now=now)
    draft.lines(lines)
    draft.read_to(audit.read_to)
    if read_past_forget:
        draft.forget_read_past()
    draft.put("last_run", {"at": now.isoformat(), **draft.counts().as_dict()})
    draft.put("last_failure", None)
    return draft.change("run", audit=audit, due=DueAnswer("finish", more_to_read=more_to_read))


def memory_record_failure(*, end_user: EndUser, audit: Audit, now: datetime) -> MemoryRun:
    """A quiet-window run that failed (the model, or a malformed answer): the text and `read_up_to`
    stay as they were, a failed audit row is written, and the run is tried again with backoff
    (RETRY_BACKOFF_MINUTES); after the last retry, not until their next chat (the Memory tab shows
    `last_failure`). Event: "run_failed"."""
    with memory_locked(end_user, now) as memory:
        attempts = (memory.last_failure or {}).get("attempts", 0) + 1
        retry_at = (
            now + timedelta(minutes=RETRY_BACKOFF_MINUTES[attempts - 1])
            if attempts <= len(RETRY_BACKOFF_MINUTES)
            else None
        )
        draft = _Draft(memory, now=now)
        draft.put("last_failure", {"at": now.isoformat(), "code": audit.error, "attempts": attempts})
        failed = Audit(**{**asdict(audit), "status": MemoryRun.Status.FAILED, "attempt": attempts})
        change = draft.change("run_failed", audit=failed, due=DueAnswer("defer", retry_at=retry_at))
        [row] = commit_changes([change], now=now)
    return row


def memory_forget_read_past(*, end_user: EndUser, pending: dict, now: datetime) -> Memory:
    """The writer found nothing left to read before a pending forget: the forget goes (when it is
    still the one the writer read), and the chats after it are read without its exclusion.
    Event: "read_past"."""
    with memory_locked(end_user, now) as memory:
        if memory.forget_pending == pending:
            draft = _Draft(memory, now=now)
            draft.forget_read_past()
            commit_changes([draft.change("read_past")], now=now)
    return memory


# --- Apply: a review of what is already kept -------------------------------------------------


def plan_apply(*, memory: Memory, lines: list[str], audit: Audit, now: datetime) -> MemoryChange:
    """Apply's change of a locked row that still reads what the review read: the reviewed lines
    (never one added: review mode), with its audit row (kind `apply`). Event: "applied"."""
    draft = _Draft(memory, now=now)
    draft.lines(lines)
    return draft.change("applied", audit=audit)


def plan_apply_failure(*, memory: Memory, audit: Audit, now: datetime) -> MemoryChange:
    """Apply's review of a memory failed: only a failed audit row; the memory stays as it is (the
    job keeps it for Resume). Event: "apply_failed"."""
    failed = Audit(**{**asdict(audit), "status": MemoryRun.Status.FAILED})
    return _Draft(memory, now=now).change("apply_failed", audit=failed)
