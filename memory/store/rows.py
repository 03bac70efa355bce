"""The memory row: its lock, the time of change no other memory of the agent holds, and the one
writer of `memory_memory` (`commit_changes`).

Every action (memory.store.actions) plans its change on the row it locked and hands it to
`commit_changes`, alone or in a batch with others (the writer's runs, Apply's reviews), which in
the caller's transaction:

- saves the rows, each with an `updated_at` no other memory of the agent holds (a tie moves on by
  a microsecond; the unique index `memory_updated_unique_per_agent` enforces it), so `before`
  pages exactly;
- writes the audit rows (`MemoryRun`: counts and timings, never words);
- answers the due queue (`memory.store.due`);
- puts the new note in the end user's chats that use memory, so the next turn of a chat in
  progress sees the memory as it is now (a stop or delete reaches it at once);
- says what each change did (`memory.store.events.publish`).
"""

import random
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from django.db import IntegrityError, transaction
from django.db.models import Case, F, TextField, Value, When

from agents.models import Conversation, EndUser
from memory.models import Memory, MemoryRun
from memory.store import counters, due, events
from memory.store.note import note_lines, render_note
from memory.store.selectors import memory_of

ONE_MICROSECOND = timedelta(microseconds=1)
TIE_CONSTRAINT = "memory_updated_unique_per_agent"
NOTE_FIELDS = frozenset({"text", "stopped_at"})  # what a chat's note is made of


def is_tie(exc: Exception) -> bool:
    """The unique index on (agent, updated_at) refused a write (PostgreSQL names it, SQLite the columns)."""
    return TIE_CONSTRAINT in str(exc) or "memory_memory.updated_at" in str(exc)


def _free_updated_at(agent_id: int, at: datetime, pk: int | None) -> datetime:
    """`at`, or the first microsecond after it that no other memory of the agent holds."""
    near = Memory.objects.filter(agent_id=agent_id, updated_at__gte=at, updated_at__lt=at + timedelta(milliseconds=50))
    if pk is not None:  # not the row itself
        near = near.exclude(pk=pk)
    taken = set(near.values_list("updated_at", flat=True))
    while at in taken:
        at += ONE_MICROSECOND
    return at


def save_unique(memory: Memory, fields: list[str], *, create: bool = False) -> None:
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
            if not is_tie(exc):
                raise
            memory.updated_at = _free_updated_at(memory.agent_id, memory.updated_at + ONE_MICROSECOND, memory.pk)
    raise IntegrityError("no free updated_at for this memory")  # pragma: no cover


class FreeTimes:
    """`updated_at` values for a batch of rows written without a savepoint each: one read per agent
    hands out times no memory of the agent holds, nor any earlier row of the batch took. A tie with
    another process fails the batch's transaction; the caller commits again with new free times,
    started at a random point up to `spread_microseconds` past each time, so two processes retrying
    at once do not pick the same ones again."""

    def __init__(self, *, spread_microseconds: int = 0):
        self.offset = (
            timedelta(microseconds=random.randrange(spread_microseconds)) if spread_microseconds else timedelta(0)
        )
        self._free: dict[int, tuple[set[datetime], datetime]] = {}  # agent -> (taken, next candidate)

    def take(self, agent_id: int, at: datetime) -> datetime:
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


def memory_row_for(end_user: EndUser, now: datetime) -> Memory:
    """The end user's memory row, created empty when there is none (a concurrent creation wins)."""
    memory = memory_of(end_user)
    if memory is not None:
        return memory
    try:
        with transaction.atomic():
            memory = Memory(
                end_user=end_user, agent_id=end_user.agent_id, updated_at=now, external_id=end_user.external_id
            )
            save_unique(memory, [], create=True)
            counters.recount([end_user.pk])
    except IntegrityError:  # a concurrent run created it
        pass
    return Memory.objects.get(end_user=end_user)  # with its fields counted


@contextmanager
def memory_locked(end_user: EndUser, now: datetime) -> Iterator[Memory]:
    """The memory row, locked for the rest of the transaction this opens."""
    with transaction.atomic():
        yield Memory.objects.select_for_update().get(pk=memory_row_for(end_user, now).pk)


def memories_locked(pks: Iterable[int]) -> dict[int, Memory]:
    """Several memory rows (id -> row), locked for the rest of the caller's transaction, in id
    order, so two batches never deadlock."""
    return {m.pk: m for m in Memory.objects.select_for_update().filter(pk__in=list(pks)).order_by("pk")}


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


# --- The one writer of changes -----------------------------------------------------------------


@dataclass(frozen=True)
class DueAnswer:
    """What a change answers the due queue: nothing is left to read (clear), a run read what was
    due (finish, perhaps with more to read), or a failed run is tried again at `retry_at` (defer)."""

    state: Literal["clear", "finish", "defer"]
    more_to_read: bool = False
    retry_at: datetime | None = None


@dataclass
class MemoryChange:
    """A planned change of one locked row (an action's plan): the row already holds its new values."""

    memory: Memory
    kind: events.Kind
    fields: set[str] = field(default_factory=set)
    counts: events.LineCounts = events.LineCounts()
    text_changed: bool = False
    was_stopped: bool = False
    run: MemoryRun | None = None  # the audit row to write
    due: DueAnswer | None = None

    def writes_anything(self) -> bool:
        return bool(self.fields or self.run or self.due)

    def event(self) -> events.MemoryChanged:
        memory, run = self.memory, self.run
        return events.MemoryChanged(
            kind=self.kind,
            agent_id=memory.agent_id,
            end_user_id=memory.end_user_id,
            at=memory.updated_at,
            lines=len(memory.lines),
            text_changed=self.text_changed,
            was_stopped=self.was_stopped,
            stopped_at=memory.stopped_at,
            counts=self.counts,
            run=None
            if run is None
            else events.RunSummary(
                kind=run.kind,
                status=run.status,
                error=run.error,
                duration_ms=run.duration_ms,
                counts=events.LineCounts(added=run.added, replaced=run.replaced, removed=run.removed),
                dropped=dict(run.dropped or {}),
            ),
        )


def commit_changes(
    changes: list[MemoryChange],
    *,
    now: datetime,
    free_times: FreeTimes | None = None,
    finished: Mapping[int, bool] | None = None,
) -> list[MemoryRun]:
    """Write planned changes of locked rows (see the module's docstring) and publish one event per
    change that wrote anything. Returns the audit rows written.

    Without `free_times` each row is saved on its own, a tie on `updated_at` moving it on by a
    microsecond. With it (a batch) the rows go in one UPDATE with times it hands out, the audit rows
    in one INSERT: a tie with another process fails the caller's transaction instead, for the caller
    to commit again with new free times. `finished`: end users whose due chats are answered without
    a change (nothing was there to read), in the same read of the queue (id -> more to read)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("commit_changes runs inside the transaction that locked the rows")
    changes = [change for change in changes if change.writes_anything()]
    _save_rows(changes, free_times)
    runs = [change.run for change in changes if change.run is not None]
    if len(runs) == 1:
        runs[0].save(force_insert=True)
    elif runs:
        MemoryRun.objects.bulk_create(runs)
    _answer_due(changes, now, finished or {})
    notes = {c.memory.end_user_id: render_note(note_lines(c.memory)) for c in changes if c.fields & NOTE_FIELDS}
    if notes:
        refresh_chat_notes_many(notes)
    for change in changes:
        events.publish(change.event())
    return runs


def _save_rows(changes: list[MemoryChange], free_times: FreeTimes | None) -> None:
    saves = [change for change in changes if change.fields]
    if free_times is None:
        for change in saves:
            if "updated_at" in change.fields:
                save_unique(change.memory, sorted(change.fields))
            else:
                change.memory.save(update_fields=sorted(change.fields))
        return
    for change in saves:
        if "updated_at" in change.fields:
            change.memory.updated_at = free_times.take(change.memory.agent_id, change.memory.updated_at)
    if saves:
        Memory.objects.bulk_update([c.memory for c in saves], sorted({f for c in saves for f in c.fields}))


def _answer_due(changes: list[MemoryChange], now: datetime, finished: Mapping[int, bool]) -> None:
    cleared: set[int] = set()
    answered = dict(finished)
    for change in changes:
        answer, end_user_id = change.due, change.memory.end_user_id
        if answer is None:
            continue
        if answer.state == "clear":
            cleared.add(end_user_id)
        elif answer.state == "finish":
            answered[end_user_id] = answer.more_to_read
        else:
            due.defer(end_user_id, answer.retry_at)
    if cleared:
        due.clear_many(cleared)
    if answered:
        due.finish_many(answered, now)
