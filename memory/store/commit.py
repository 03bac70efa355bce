"""The one place a memory's state changes.

Every path that changes a memory (the quiet-window writer, Apply, a team edit, the API, an end
user's own request, retention) takes the row lock with `memory_locked` and hands its change to
`memory_commit`, which in that one transaction:

- sets the text (already checked by the guards of the path), `stopped_at`, the horizon;
- moves `read_up_to` forward only (never back);
- gives the memory an `updated_at` no other memory of the agent holds (a tie moves on by a
  microsecond; the unique index `memory_updated_unique_per_agent` enforces it), so `before` pages
  exactly;
- writes the audit row (`MemoryRun`: counts and timings, never words);
- answers the due queue (`memory.store.due`);
- puts the new note in the end user's chats that use memory, so the next turn of a chat in
  progress sees the memory as it is now (a stop or delete reaches it at once).

The invariant it keeps with the writer: no chat from before a stop, delete, expiry (a new
*horizon*: `read_up_to` moves to that moment) or forget (`forget_pending` until read past) ever
adds a line.
"""

import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Case, F, TextField, Value, When
from django.db.models.signals import post_save
from django.utils.dateparse import parse_datetime

from agents.models import Conversation, EndUser
from memory.models import Memory, MemoryRun
from memory.store import due
from memory.store.note import note_lines, render_note
from memory.store.selectors import memory_of

UNSET = object()
ONE_MICROSECOND = timedelta(microseconds=1)
TIE_CONSTRAINT = "memory_updated_unique_per_agent"


def _free_updated_at(agent_id: int, at: datetime, pk: int | None) -> datetime:
    """`at`, or the first microsecond after it that no other memory of the agent holds."""
    taken = set(
        Memory.objects.filter(agent_id=agent_id, updated_at__gte=at, updated_at__lt=at + timedelta(milliseconds=50))
        .exclude(pk=pk)
        .values_list("updated_at", flat=True)
    )
    while at in taken:
        at += ONE_MICROSECOND
    return at


def _save_unique(memory: Memory, fields: list[str], *, create: bool = False) -> None:
    """Save, moving `updated_at` on by a microsecond while another memory of the agent holds it
    (two writers may pick the same free time at once: the unique index decides)."""
    memory.updated_at = _free_updated_at(memory.agent_id, memory.updated_at, memory.pk)
    for _ in range(50):
        try:
            with transaction.atomic():
                if create:
                    memory.save(force_insert=True)
                else:
                    memory.save(update_fields=fields)
            return
        except IntegrityError as exc:
            if TIE_CONSTRAINT not in str(exc) and "memory_memory.updated_at" not in str(exc):  # PostgreSQL / SQLite
                raise
            memory.updated_at = _free_updated_at(memory.agent_id, memory.updated_at + ONE_MICROSECOND, memory.pk)
    raise IntegrityError("no free updated_at for this memory")  # pragma: no cover


class CommitBatch:
    """The side effects of several commits in one transaction (the writer's batch of quiet-window
    runs), written together by `flush`: the audit rows in one INSERT (each still announced by
    `post_save`, as a single commit's is), the due queue in one read and at most two updates, the
    open chats' notes in one UPDATE, the memory rows in one UPDATE. `updated_at` values are handed
    out from one read per agent and saved without a savepoint: a tie with another process fails the
    batch's transaction, which the caller commits again with a new batch (`spread_microseconds`) or
    leaves to single commits (`writer_batch._commit_with_retries`)."""

    def __init__(self, now: datetime, *, spread_microseconds: int = 0):
        self.now = now
        # After a tie: start the free times at a random point this far past `at`, so two processes
        # retrying at once (or a retry and another's single runs) do not pick the same ones again.
        self.offset = (
            timedelta(microseconds=random.randrange(spread_microseconds)) if spread_microseconds else timedelta(0)
        )
        self.runs: list[MemoryRun] = []
        self.cleared: set[int] = set()
        self.finished: dict[int, bool] = {}  # end user id -> more to read
        self.notes: dict[int, str] = {}
        self.saves: list[tuple[Memory, list[str]]] = []
        self._free: dict[int, tuple[set[datetime], datetime]] = {}  # agent -> (taken, next candidate)

    def updated_at_for(self, agent_id: int, at: datetime) -> datetime:
        """`at` or the first microsecond after it that no memory of the agent holds, nor any
        earlier commit of this batch took (one read per agent and batch); after the batch's
        random offset, if it has one."""
        at = at + self.offset
        if agent_id not in self._free:
            taken = set(
                Memory.objects.filter(
                    agent_id=agent_id, updated_at__gte=at, updated_at__lt=at + timedelta(milliseconds=50)
                ).values_list("updated_at", flat=True)
            )
            self._free[agent_id] = (taken, at)
        taken, candidate = self._free[agent_id]
        candidate = max(candidate, at)
        while candidate in taken:
            candidate += ONE_MICROSECOND
        taken.add(candidate)
        self._free[agent_id] = (taken, candidate + ONE_MICROSECOND)
        return candidate

    def flush(self) -> None:
        if self.saves:  # one UPDATE; each row announced with its own fields, as its save would be
            Memory.objects.bulk_update(
                [memory for memory, _ in self.saves], sorted({f for _, fields in self.saves for f in fields})
            )
            for memory, fields in self.saves:
                post_save.send(
                    sender=Memory,
                    instance=memory,
                    created=False,
                    update_fields=frozenset(fields),
                    raw=False,
                    using=memory._state.db,
                )
            self.saves = []
        if len(self.runs) == 1:
            self.runs[0].save(force_insert=True)
        elif self.runs:
            MemoryRun.objects.bulk_create(self.runs)
            for row in self.runs:  # what a save would have announced (the metrics, the log line)
                post_save.send(
                    sender=MemoryRun, instance=row, created=True, update_fields=None, raw=False, using=row._state.db
                )
        self.runs = []
        if self.cleared:
            due.clear_many(self.cleared)
            self.cleared = set()
        if self.finished:
            due.finish_many(self.finished, self.now)
            self.finished = {}
        if self.notes:
            refresh_chat_notes_many(self.notes)
            self.notes = {}


def memory_row_for(end_user: EndUser, now: datetime) -> Memory:
    """The end user's memory row, created empty when there is none (a concurrent creation wins)."""
    memory = memory_of(end_user)
    if memory is not None:
        return memory
    try:
        with transaction.atomic():
            memory = Memory(end_user=end_user, agent_id=end_user.agent_id, updated_at=now)
            _save_unique(memory, [], create=True)
    except IntegrityError:  # a concurrent run created it
        memory = Memory.objects.get(end_user=end_user)  # it exists now
    return memory


@contextmanager
def memory_locked(end_user: EndUser, now: datetime) -> Iterator[Memory]:
    """The memory row, locked for the rest of the transaction this opens."""
    with transaction.atomic():
        yield Memory.objects.select_for_update().get(pk=memory_row_for(end_user, now).pk)


def _counts(before: list[str], after: list[str]) -> dict:
    before_set, after_set = set(before), set(after)
    removed = len([line for line in before if line not in after_set])
    added = len([line for line in after if line not in before_set])
    replaced = min(added, removed)
    return {"added": added - replaced, "replaced": replaced, "removed": removed - replaced}


def refresh_chat_notes(memory: Memory) -> None:
    """The end user's chats that use memory get the note of the memory as it is now: the next
    turn of a chat in progress reads it with the conversation row (no query of its own)."""
    refresh_chat_notes_many({memory.end_user_id: render_note(note_lines(memory))})


def refresh_chat_notes_many(notes: dict[int, str]) -> None:
    """`refresh_chat_notes` for several end users (id -> their note) in one UPDATE."""
    if len(notes) == 1:
        [(end_user_id, note)] = notes.items()
        Conversation.objects.filter(end_user_id=end_user_id, uses_memory=True).exclude(memory_note=note).update(
            memory_note=note
        )
        return
    Conversation.objects.filter(end_user_id__in=list(notes), uses_memory=True).update(
        memory_note=Case(
            *(When(end_user_id=pk, then=Value(note)) for pk, note in notes.items()),
            default=F("memory_note"),
            output_field=TextField(),
        )
    )


def memory_commit(
    memory: Memory,
    *,
    now: datetime,
    kind: str,
    lines: list[str] | None = None,
    read_to: datetime | None = None,
    horizon: bool = False,
    stopped: bool | None = None,
    forget=UNSET,
    run: dict | None = None,
    audit: bool = True,
    status: str = MemoryRun.Status.SUCCEEDED,
    actor=None,
    actor_id: int | None = None,
    last_run: bool = False,
    last_failure=UNSET,
    due_state: str | None = None,
    more_to_read: bool = False,
    retry_at: datetime | None = None,
    batch: CommitBatch | None = None,
) -> MemoryRun | None:
    """Commit one change to a memory locked by `memory_locked` (see the module's docstring).

    lines: the new text (already through the guards); stopped: True stops (empties, horizon),
    False resumes (horizon); horizon: a new life starts at `now` (delete, expiry); read_to: how far
    this change read their chats; forget: the pending forget ({...} or None to clear); run: the audit
    row's fields beside its counts (a run that reads writes one even when nothing changed; a direct
    edit writes one when a line changed); due_state: "clear", "finish" or "defer" for the queue;
    batch: several commits in one transaction (`CommitBatch`), whose audit row, queue and notes
    are written by its `flush` (a "defer" is not batched). Returns the audit row, if one was
    written (with a batch: once flushed)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("memory_commit runs inside memory_locked")
    before = memory.lines
    fields: set[str] = set()
    if stopped is True:
        lines = []
        if memory.stopped_at is None:
            memory.stopped_at = now
            fields.add("stopped_at")
        horizon = True
    elif stopped is False and memory.stopped_at is not None:
        memory.stopped_at = None
        fields.add("stopped_at")
        horizon = True
    if lines is not None and "\n".join(lines) != memory.text:
        memory.text = "\n".join(lines)
        fields.add("text")
    if horizon:
        read_to = max(read_to or now, now)
        memory.horizon_at = now
        memory.forget_pending = None
        fields |= {"horizon_at", "forget_pending"}
    if read_to is not None and (memory.read_up_to is None or read_to > memory.read_up_to):
        memory.read_up_to = read_to
        fields.add("read_up_to")
    if forget is not UNSET:
        read_past = memory.forget_pending
        if forget is None and read_past:  # read past a forget: Try replays only what came after it
            forget_at = parse_datetime(read_past["before"])
            if memory.horizon_at is None or forget_at > memory.horizon_at:
                memory.horizon_at = forget_at
                fields.add("horizon_at")
        memory.forget_pending = forget
        fields.add("forget_pending")
    counts = _counts(before, memory.lines)
    if last_run:
        memory.last_run = {"at": now.isoformat(), **counts}
        fields.add("last_run")
    elif horizon and not memory.text:
        memory.last_run = None
        fields.add("last_run")
    if last_failure is not UNSET:
        memory.last_failure = last_failure
        fields.add("last_failure")
    note_changed = bool(fields & {"text", "stopped_at"})
    if note_changed or horizon:
        memory.updated_at = now
        fields.add("updated_at")
    own = batch is None
    batch = batch or CommitBatch(now)
    if fields:
        if not own:
            if "updated_at" in fields:
                memory.updated_at = batch.updated_at_for(memory.agent_id, memory.updated_at)
            batch.saves.append((memory, sorted(fields)))
        elif "updated_at" in fields:
            _save_unique(memory, sorted(fields))
        else:
            memory.save(update_fields=sorted(fields))
    row = None
    if run is not None or (audit and any(counts.values())):
        values = {**counts, **(run or {})}
        if status == MemoryRun.Status.FAILED:
            values.update(added=0, replaced=0, removed=0)
        row = MemoryRun(
            memory=memory, kind=kind, status=status, started_at=now, actor_id=actor.pk if actor else actor_id, **values
        )
        batch.runs.append(row)
    if due_state == "clear" or stopped is True:
        batch.cleared.add(memory.end_user_id)
    elif due_state == "finish":
        batch.finished[memory.end_user_id] = more_to_read
    elif due_state == "defer":
        due.defer(memory.end_user_id, retry_at)
    if note_changed:
        batch.notes[memory.end_user_id] = render_note(note_lines(memory))
    if own:
        batch.flush()
    return row
