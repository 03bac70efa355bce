"""The quiet-window run: one path for one end user or many. The sweep queues batches
(`memory.writer.batch`); a run of one end user (a task delivered alone, the guard evaluation) is a
batch of one (`run_quiet_window`).

A batch reads in a fixed number of queries (the end users with their agents' published configs,
their memory rows, their active chats, what each may read, the versions those chats began on),
asks the engine and the guards for each end user (`operations.propose_read`; a model's calls in
flight together, `engines.concurrently`, the offline engine's one after another; no database in
the calls), then commits every change in one transaction: the memory rows are locked together
(in id order, so two batches never deadlock), each one is compared with what was read, and each
change goes through `actions.plan_run`, all of them written together by `rows.commit_changes`
(the one writer of memory rows: one UPDATE of the memories, one INSERT of the audit rows, the due
queue, the notes).

What each end user may read is one definition (`read_parts`, which Try reads ahead with too,
`unread_parts`): from `read_up_to`, never into a chat still active (its cutoff, R11), a pending
forget's part on its own and read with the forget, a backlog MAX_MESSAGES_PER_RUN messages a run
(the rest stays due for the next sweep). A round of the batch reads each end user's next part:

- nothing to read: their due chats are answered; nothing before a pending forget: the forget goes
  (`actions.memory_forget_read_past`) and they are read again in the next round;
- a memory changed since it was read (a team edit, a stop, another run): read again in the next
  round, at most ROUNDS rounds;
- an engine failure (a malformed answer included): a failed run for that end user only, with its
  backoff (`actions.memory_record_failure`);
- a tie on `updated_at` with another process rolls the commit back and it is committed again with
  the free times read anew from a random point within the next 2 ms; after COMMIT_ATTEMPTS ties,
  or any other refusal, each end user's change is committed in a transaction of its own.
"""

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypedDict

from django.db import DatabaseError, IntegrityError, models, transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from agents.engines import EngineError, EngineResult, concurrently, get_engine
from agents.models import AgentVersion, EndUser
from memory.models import Memory, MemoryRun
from memory.store import counters, due
from memory.store.actions import Audit, memory_forget_read_past, memory_record_failure, plan_run
from memory.store.rows import FreeTimes, MemoryChange, commit_changes, is_tie, memories_locked, memory_row_for
from memory.store.selectors import WriterInput, memories_of, read_cutoffs, writer_inputs
from memory.writer.operations import Outcome, propose_read, version_configs

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    from agents.engines import Engine

ROUNDS = 3  # a memory changed between the read and the write is read again, this often at most
COMMIT_ATTEMPTS = 4  # a tie on updated_at with another process: read the free times again
RETRY_SPREAD_MICROSECONDS = 2000  # ... from a random point within the next 2 ms (a time of change, 2 ms late at most)

log = logging.getLogger("memory.writer.batch")  # the batch's log, under the name it always had


# --- What a memory may read ---------------------------------------------------------------------


def forget_before(pending: dict) -> datetime:
    """The end of a pending forget's part: when it was asked (ISO 8601, as the end user's request stores it)."""
    before = parse_datetime(pending["before"])
    if before is None:
        raise ValueError(f"A pending forget's time is not ISO 8601: {pending['before']!r}.")
    return before


def last_read(inp: WriterInput) -> datetime:
    """The time of the last message or action a run read: its `read_up_to` once written."""
    return max([m["created_at"] for m in inp["messages"]] + [a["created_at"] for a in inp["actions"]])


@dataclass(frozen=True)
class Where:
    """Where an end user's next read starts: after `read_from`, with the pending `forget` (if any),
    up to `cutoff` (now, or the first unread message of a chat still active)."""

    read_from: datetime | None
    forget: dict | None
    cutoff: datetime


@dataclass(frozen=True)
class Part:
    """One read of what a memory may read: the writer input, and where it was read from."""

    inp: WriterInput
    where: Where

    @property
    def empty(self) -> bool:
        return not self.inp["messages"] and not self.inp["actions"]

    @property
    def forget_read_past(self) -> dict | None:
        """The pending forget whose part this read finishes (it goes with this part), or None."""
        forget = self.where.forget
        return forget if forget is not None and self.inp["read_to"] > forget_before(forget) else None

    @property
    def read_past_forget(self) -> bool:
        return self.forget_read_past is not None

    @property
    def more_to_read(self) -> bool:
        return self.inp["read_to"] < self.where.cutoff or self.read_past_forget


def read_parts(where: dict[int, Where]) -> dict[int, Part]:
    """Each end user's next part (id -> part), in one read (`selectors.writer_inputs`): after
    `read_from`, up to the cutoff, and a pending forget's part on its own (up to the moment it was
    asked), so what they said after it is read without its exclusion."""
    spans = {}
    for pk, at in where.items():
        before = at.cutoff
        if at.forget:
            before = min(before, forget_before(at.forget) + timedelta(microseconds=1))
        spans[pk] = (at.read_from, before)
    return {pk: Part(inp=inp, where=where[pk]) for pk, inp in writer_inputs(spans=spans).items()}


def unread_parts(
    *, memory: Memory | None, end_user: EndUser, now: datetime, include_open: bool = False, limit: int = 5
) -> tuple[list[tuple[WriterInput, dict | None]], bool]:
    """What the next quiet-window runs would read, in order, part after part as the runs read them
    (`read_parts`): from `read_up_to` (so nothing already read comes back, and no team correction
    or deleted line is undone by an old chat), never into a chat still active (unless
    `include_open`), a pending forget's part on its own with the forget, then the rest without it.
    Each part is (writer input, the pending forget it is read with); at most `limit` parts, and
    whether more remain unread. Reads only: Try (`memory.tools.trial`) previews with it what a run
    would write."""
    read_from = memory.read_up_to if memory else None
    forget = memory.forget_pending if memory else None
    cutoff = now if include_open else read_cutoffs(read_from={end_user.pk: read_from}, now=now)[end_user.pk]
    parts: list[tuple[WriterInput, dict | None]] = []
    for _ in range(limit + 1):  # one more step may let a read-past forget go without a part
        part = read_parts({end_user.pk: Where(read_from=read_from, forget=forget, cutoff=cutoff)})[end_user.pk]
        if part.empty:
            if part.read_past_forget:  # the forget's part is read: let it go, as a run does
                forget = None
                continue
            return parts, False
        if len(parts) == limit:
            return parts, True
        parts.append((part.inp, forget))
        read_from = last_read(part.inp)
        if part.read_past_forget:
            forget = None
        elif not part.more_to_read:
            return parts, False
    return parts, True


# --- The run: a batch ----------------------------------------------------------------------------


class _Published(TypedDict):
    published_config: dict[str, Any]  # the agent's newest version's config


def _end_users(end_user_ids: Iterable[int]) -> "list[WithAnnotations[EndUser, _Published]]":
    """The end users with their agent, team and the agent's published config, in one query."""
    published = AgentVersion.objects.newest_of(OuterRef("agent_id")).values("config")
    return list(
        EndUser.objects.select_related("agent__team")
        .filter(pk__in=list(end_user_ids))
        .annotate(published_config=Subquery(published, output_field=models.JSONField()))
        .order_by("pk")
    )


def _memory_rows(end_users: Sequence[EndUser], now: datetime) -> dict[int, Memory]:
    """Their memory rows (end user id -> row), those missing created empty together. A row another
    process created first is read back; one whose `updated_at` tied with another process's is
    created again from a random point within the next few milliseconds (then, still missing, on
    its own: `rows.memory_row_for`)."""
    rows = memories_of(end_users)
    for attempt in range(COMMIT_ATTEMPTS):
        missing = [e for e in end_users if e.pk not in rows]
        if not missing:
            break
        free = FreeTimes(spread_microseconds=RETRY_SPREAD_MICROSECONDS if attempt else 0)
        Memory.objects.bulk_create(
            [
                Memory(
                    end_user=e, agent_id=e.agent_id, updated_at=free.take(e.agent_id, now), external_id=e.external_id
                )
                for e in missing
            ],
            ignore_conflicts=True,  # created meanwhile, or a tie on updated_at: read back, then again
        )
        counters.recount(e.pk for e in missing)  # the R21 fields of the rows made
        rows.update(memories_of(missing))
    for end_user in end_users:
        if end_user.pk not in rows:
            rows[end_user.pk] = memory_row_for(end_user, now)
    return rows


@dataclass
class _Proposal:
    """What the engine and the guards made of one end user's part, for the commit."""

    memory: Memory  # as read: the commit checks that nobody changed it since
    part: Part
    outcome: Outcome
    results: list[EngineResult]
    started: float  # time.monotonic() before the engine was asked


@dataclass
class _Batch:
    """The end users of one run (id -> end user with the published config), their memory rows as
    last read, and the audit rows written so far."""

    people: dict[int, "WithAnnotations[EndUser, _Published]"]
    memories: dict[int, Memory]
    now: datetime
    engine: "Engine"
    rows: list[MemoryRun]

    def round(self, todo: list[int], finished: dict[int, bool]) -> list[int]:
        """Read each of `todo`'s next part, ask the engine, commit (with `finished`: end users whose
        due chats are answered without a run): the end users to read again."""
        again, work = [], []
        readable = [pk for pk in todo if self.memories[pk].stopped_at is None]
        finished.update(dict.fromkeys(set(todo) - set(readable), False))  # stopped: nothing is read
        for pk, part in self.read(readable).items():
            if not part.empty:
                work.append((pk, part))
            elif (forget := part.forget_read_past) is not None:  # nothing left before it: it goes, read on
                self.memories[pk] = memory_forget_read_past(end_user=self.people[pk], pending=forget, now=self.now)
                again.append(pk)
            else:
                finished[pk] = False  # nothing to read: no longer due
        if not work and not finished:
            return again
        proposals = self.propose_all(work)
        committed, changed = _commit_with_retries(proposals, finished, self.now)
        self.rows.extend(committed)
        self.memories.update(changed)
        return again + list(changed)

    def read(self, pks: list[int]) -> dict[int, Part]:
        memories = {pk: self.memories[pk] for pk in pks}
        cutoffs = read_cutoffs(read_from={pk: m.read_up_to for pk, m in memories.items()}, now=self.now)
        return read_parts(
            {
                pk: Where(read_from=m.read_up_to, forget=m.forget_pending, cutoff=cutoffs[pk])
                for pk, m in memories.items()
            }
        )

    def propose_all(self, work: list[tuple[int, Part]]) -> dict[int, _Proposal]:
        """Each person's engine call and guards (`operations.propose_read`), a model's calls in
        flight together (`engines.concurrently`), the offline engine's one after another. No
        database in the calls; a failed call records only its own person's failed run."""
        versions = version_configs(*(part.inp for _, part in work))

        def propose_one(item: tuple[int, Part]) -> tuple[int, float, _Proposal | EngineError]:
            pk, part = item
            memory, started = self.memories[pk], time.monotonic()
            try:
                outcome, results = propose_read(
                    lines=memory.lines,
                    inp=part.inp,
                    published=self.people[pk].published_config,
                    versions=versions,
                    now=self.now,
                    engine=self.engine,
                    forget=part.where.forget,
                )
            except EngineError as exc:
                return pk, started, exc
            return pk, started, _Proposal(memory=memory, part=part, outcome=outcome, results=results, started=started)

        proposals: dict[int, _Proposal] = {}
        for pk, started, answer in concurrently(self.engine, propose_one, work):
            if isinstance(answer, _Proposal):
                proposals[pk] = answer
            else:
                self.rows.append(self.record_failure(pk, answer, started))
        return proposals

    def record_failure(self, pk: int, exc: EngineError, started: float) -> MemoryRun:
        audit = Audit(
            kind=MemoryRun.Kind.QUIET,
            engine=self.engine.name,
            error=exc.code,
            read_from=self.memories[pk].read_up_to,
            duration_ms=int((time.monotonic() - started) * 1000),
        )
        return memory_record_failure(end_user=self.people[pk], audit=audit, now=self.now)


def run_quiet_windows(*, end_user_ids, now: datetime | None = None, engine=None) -> list[MemoryRun]:
    """Read what each of `end_user_ids` typed and which actions ran since their `read_up_to`, and
    update their memories (see the module's docstring). Returns the audit rows written, in no
    particular order (one at most per end user).

    Guarantees: nothing of a chat that is still active is read (R11); each part is read once
    (`read_up_to` only moves forward, and the write checks that no other run moved it first); each
    chat is read under the stricter of its own version and the published one (R2); a pending
    forget's part is read with the forgotten fact excluded; a stopped memory, memory off or a plan
    without memory writes nothing; a model failure, a malformed answer included, leaves the text
    and `read_up_to` as they were, records a failed run, and retries later with backoff.
    Idempotent: a second delivery of the same task finds nothing new. The change itself is
    `actions.plan_run`'s."""
    now = now or timezone.now()
    batch = _Batch(people={}, memories={}, now=now, engine=engine or get_engine(), rows=[])
    off: dict[int, bool] = {}
    for end_user in _end_users(end_user_ids):  # erased since the task was queued: absent
        if end_user.published_config["memorySettings"]["on"] and end_user.agent.team.has_memory:
            batch.people[end_user.pk] = end_user
        else:
            off[end_user.pk] = False
    batch.memories = _memory_rows(list(batch.people.values()), now)
    todo, finished = list(batch.people), off
    for _ in range(ROUNDS):
        if not todo and not finished:
            break
        todo, finished = batch.round(todo, finished), {}
    return batch.rows


def run_quiet_window(*, end_user_id: int, now: datetime | None = None, engine=None) -> MemoryRun | None:
    """`run_quiet_windows` for one end user (a batch of one): the audit row, or None when there
    was nothing to do."""
    rows = run_quiet_windows(end_user_ids=[end_user_id], now=now, engine=engine)
    return rows[0] if rows else None


# --- The commit --------------------------------------------------------------------------------


def _commit_with_retries(
    proposals: dict[int, _Proposal], finished: dict[int, bool], now: datetime
) -> tuple[list[MemoryRun], dict[int, Memory]]:
    """(the audit rows written, the memories changed since they were read, as they are now). A
    tie on `updated_at` with another process rolls the transaction back: it is tried again (the
    free times read anew), up to COMMIT_ATTEMPTS times; any other refusal, or a last tie, commits
    each end user's change in a transaction of its own."""
    for attempt in range(1, COMMIT_ATTEMPTS + 1):
        changed: dict[int, Memory] = {}
        free_times = FreeTimes(spread_microseconds=RETRY_SPREAD_MICROSECONDS if attempt > 1 else 0)
        try:
            with transaction.atomic():
                return _commit(proposals, now, changed, free_times=free_times, finished=finished), changed
        except IntegrityError as exc:
            if not is_tie(exc) or attempt == COMMIT_ATTEMPTS:
                _refused(exc, len(proposals), attempt)
                break
        except DatabaseError as exc:
            _refused(exc, len(proposals), attempt)
            break
    return _commit_each(proposals, finished, now)


def _refused(exc: Exception, people: int, attempt: int) -> None:
    reason = f"tied on updated_at {attempt} times" if is_tie(exc) else f"refused ({type(exc).__name__})"
    log.warning("memory batch %s; committing its %d end users one by one", reason, people)


def _commit_each(
    proposals: dict[int, _Proposal], finished: dict[int, bool], now: datetime
) -> tuple[list[MemoryRun], dict[int, Memory]]:
    """Each end user's change in a transaction of its own, a tie on `updated_at` moving it on by a
    microsecond (`rows.save_unique`); a refusal now is the database's, and raised."""
    rows: list[MemoryRun] = []
    changed: dict[int, Memory] = {}
    for pk, proposal in proposals.items():
        with transaction.atomic():
            rows += _commit({pk: proposal}, now, changed, free_times=None, finished={})
    if finished:
        due.finish_many(finished, now)
    return rows, changed


def _unchanged(locked: Memory, read: Memory) -> bool:
    return (
        locked.read_up_to == read.read_up_to
        and locked.text == read.text
        and locked.stopped_at is None
        and locked.forget_pending == read.forget_pending
    )


def _commit(
    proposals: dict[int, _Proposal],
    now: datetime,
    changed: dict[int, Memory],
    *,
    free_times: FreeTimes | None,
    finished: dict[int, bool],
) -> list[MemoryRun]:
    """Lock the rows, plan each run still on the memory it read (`actions.plan_run`; one changed
    since goes to `changed`, as it is now) and write them together (`rows.commit_changes`)."""
    locked = memories_locked(p.memory.pk for p in proposals.values())
    changes: list[MemoryChange] = []
    for pk, proposal in proposals.items():
        memory = locked.get(proposal.memory.pk)
        if memory is None or not _unchanged(memory, proposal.memory):
            if memory is not None:
                changed[pk] = memory  # read again in the next round
            continue
        changes.append(_planned(proposal, memory, now))
    return commit_changes(changes, now=now, free_times=free_times, finished=finished)


def _planned(proposal: _Proposal, memory: Memory, now: datetime) -> MemoryChange:
    inp, outcome, results = proposal.part.inp, proposal.outcome, proposal.results
    audit = Audit(
        kind=MemoryRun.Kind.QUIET,
        engine=results[0].engine if results else "",
        dropped=dict(outcome.dropped),
        messages_read=len(inp["messages"]),
        actions_read=len(inp["actions"]),
        read_from=proposal.memory.read_up_to,
        read_to=last_read(inp),
        duration_ms=int((time.monotonic() - proposal.started) * 1000),
        input_tokens=sum(r.input_tokens for r in results),
        output_tokens=sum(r.output_tokens for r in results),
    )
    return plan_run(
        memory=memory,
        lines=outcome.lines,
        audit=audit,
        read_past_forget=proposal.part.read_past_forget,
        more_to_read=proposal.part.more_to_read,
        now=now,
    )
