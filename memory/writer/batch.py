"""Quiet-window runs in batches: what `writer.run_quiet_window` does for one end user, for several
at once, with the same guarantees and a fraction of the queries.

The sweep queues one task per `batch_size()` end users at most (BATCH_SIZE with the offline engine;
with a model, its concurrency). A batch reads everything it needs in a fixed
number of queries (the end users with their agents' published configs, their memory rows, their
active chats, what each may read, the versions those chats began on), asks the engine and the
guards for each end user exactly as a single run does (`writer.propose_read`; a model's calls in
flight together, `engines.concurrently`, the offline engine's one after another), then commits every
change in one transaction: the memory rows are locked together (in id order, so two batches never
deadlock), each one is compared with what was read, and each change goes through
`actions.plan_run`, all of them written together by `rows.commit_changes` (the one writer of
memory rows: one UPDATE of the memories, one INSERT of the audit rows, the due queue, the notes).

Whatever a batch cannot do simply goes to the single run, one end user at a time: a pending
forget, a chat still active (its cutoff is the single run's), a memory changed since it was read,
an engine failure (recorded with its backoff, for that end user only), or a commit the database refused (a tie on
`updated_at` with another process rolls the batch back and it is committed again with the free
times read anew from a random point within the next 2 ms; after COMMIT_ATTEMPTS ties, or any
other refusal, each end user runs alone).
"""

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

from django.db import DatabaseError, IntegrityError, models, transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from agents.engines import EngineError, concurrently
from agents.models import AgentVersion, EndUser
from memory.models import Memory, MemoryRun
from memory.store import due
from memory.store.actions import Audit, plan_run
from memory.store.rows import FreeTimes, commit_changes, is_tie, memories_locked
from memory.store.selectors import MAX_MESSAGES_PER_RUN, WriterInput, memories_of, writer_inputs
from memory.writer import run as writer_run
from memory.writer.run import Outcome, _record_failure, propose_read, run_quiet_window

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    from agents.engines import Engine, EngineResult

COMMIT_ATTEMPTS = 4  # a tie on updated_at with another process: read the free times again
RETRY_SPREAD_MICROSECONDS = 2000  # ... from a random point within the next 2 ms (a time of change, 2 ms late at most)
BATCH_SIZE = 25  # end users per task at most: large enough to share the reads, small enough to hold locks briefly


def batch_size() -> int:
    """End users per task with the configured engine: BATCH_SIZE with the offline rules (CPU,
    milliseconds a person); with a model, its concurrency (MODEL_CONCURRENCY): the batch's calls
    are in flight together (`engines.concurrently`), so a task takes about one call's time, at worst
    one call's timeout and retries, far inside the cluster's timeout."""
    engine = writer_run.get_engine()  # the writer's, which tests may swap
    if getattr(engine, "concurrency", 1) > 1:
        return max(1, engine.batch_size)
    return max(1, min(BATCH_SIZE, getattr(engine, "batch_size", 1)))


log = logging.getLogger(__name__)


@dataclass
class _Pending:
    memory: Memory  # as read: the commit checks that nobody changed it since
    outcome: Outcome
    results: "list[EngineResult]"
    inp: WriterInput
    started: float


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
    created again from a random point within the next few milliseconds (then, still missing, it is
    left to the single run)."""
    rows = memories_of(end_users)
    for attempt in range(COMMIT_ATTEMPTS):
        missing = [e for e in end_users if e.pk not in rows]
        if not missing:
            break
        free = FreeTimes(spread_microseconds=RETRY_SPREAD_MICROSECONDS if attempt else 0)
        Memory.objects.bulk_create(
            [Memory(end_user=e, agent_id=e.agent_id, updated_at=free.take(e.agent_id, now)) for e in missing],
            ignore_conflicts=True,  # created meanwhile, or a tie on updated_at: read back, then again
        )
        rows.update(memories_of(missing))
    return rows


def _version_configs(inputs: dict[int, WriterInput]) -> dict:
    ids = {
        item["version_id"]
        for inp in inputs.values()
        for key in ("messages", "actions")
        for item in inp[key]
        if item["version_id"] is not None
    }
    return dict(AgentVersion.objects.filter(pk__in=ids).values_list("pk", "config")) if ids else {}


def _unchanged(locked: Memory, read: Memory) -> bool:
    return (
        locked.read_up_to == read.read_up_to
        and locked.text == read.text
        and locked.stopped_at is None
        and locked.forget_pending == read.forget_pending
    )


def run_quiet_windows(*, end_user_ids, now: datetime | None = None, engine=None) -> list[MemoryRun]:
    """`writer.run_quiet_window` for each of `end_user_ids` (see the module's docstring). Returns
    the audit rows written, in no particular order."""
    now = now or timezone.now()
    finished: dict[int, bool] = {}  # nothing to read: no longer due
    alone: list[int] = []  # for the single run
    rows: list[MemoryRun] = []

    live = []
    for end_user in _end_users(end_user_ids):
        if not end_user.published_config["memorySettings"]["on"] or not end_user.agent.team.has_memory:
            finished[end_user.pk] = False
        else:
            live.append(end_user)
    memories = _memory_rows(live, now)
    active = due.active_conversations_many([e.pk for e in live], now)
    readable = []
    for end_user in live:
        memory = memories.get(end_user.pk)
        if memory is None or memory.forget_pending or end_user.pk in active:
            alone.append(end_user.pk)
        elif memory.stopped_at is not None:
            finished[end_user.pk] = False
        else:
            readable.append(end_user.pk)
    inputs = writer_inputs(end_user_ids=readable, read_to=now)
    versions = _version_configs(inputs)
    configs = {e.pk: e.published_config for e in live}

    work = []
    for pk, inp in inputs.items():
        if not inp["messages"] and not inp["actions"]:
            finished[pk] = False
        elif len(inp["messages"]) == MAX_MESSAGES_PER_RUN:  # a backlog: the single run reads it part by part
            alone.append(pk)
        else:
            work.append((pk, inp))

    pending, failures = _propose_all(
        work, memories=memories, configs=configs, versions=versions, now=now, engine=engine
    )
    by_pk = {e.pk: e for e in live}
    for pk, started, exc in failures:  # a failed call fails only its own person, with its backoff
        rows.append(
            _record_failure(
                end_user=by_pk[pk],
                exc=exc,
                now=now,
                started=started,
                read_from=memories[pk].read_up_to,
                kind=MemoryRun.Kind.QUIET,
                engine=engine,
            )
        )
    committed, changed = _commit_with_retries(pending, finished, now)
    rows.extend(committed)
    alone.extend(changed)
    for pk in alone:
        row = run_quiet_window(end_user_id=pk, now=now, engine=engine)
        if row is not None:
            rows.append(row)
    return rows


def _propose_all(
    work: list[tuple[int, WriterInput]],
    *,
    memories: dict[int, Memory],
    configs: dict[int, dict],
    versions: dict,
    now: datetime,
    engine: "Engine | None",
) -> tuple[dict[int, _Pending], list[tuple[int, float, EngineError]]]:
    """Each person's engine call and guards (`writer.propose_read`), a model's calls in flight
    together (`engines.concurrently`), the offline engine's one after another: (the proposals by end
    user, the failures as (end user, when its call began, the error)). No database in the calls."""

    def propose_one(item: tuple[int, WriterInput]) -> tuple[int, float, _Pending | EngineError]:
        pk, inp = item
        memory, started = memories[pk], time.monotonic()
        try:
            outcome, results = propose_read(
                lines=memory.lines, inp=inp, published=configs[pk], versions=versions, now=now, engine=engine
            )
        except EngineError as exc:
            return pk, started, exc
        return pk, started, _Pending(memory=memory, outcome=outcome, results=results, inp=inp, started=started)

    pending: dict[int, _Pending] = {}
    failures: list[tuple[int, float, EngineError]] = []
    for pk, started, answer in concurrently(engine or writer_run.get_engine(), propose_one, work):
        if isinstance(answer, _Pending):
            pending[pk] = answer
        else:
            failures.append((pk, started, answer))
    return pending, failures


def _commit_with_retries(
    pending: dict[int, _Pending], finished: dict[int, bool], now: datetime
) -> tuple[list[MemoryRun], list[int]]:
    """(the audit rows written, the end users left to the single run). A tie on `updated_at` with
    another process rolls the transaction back: it is tried again (the free times read anew), up to
    COMMIT_ATTEMPTS times; any other refusal, or a last tie, leaves the whole batch to the single run."""
    for attempt in range(1, COMMIT_ATTEMPTS + 1):
        changed: list[int] = []
        try:
            with transaction.atomic():
                return _commit(pending, finished, now, changed, retry=attempt > 1), changed
        except IntegrityError as exc:
            if not is_tie(exc):
                log.warning(
                    "memory batch refused (%s); running its %d end users one by one", type(exc).__name__, len(pending)
                )
                break
            if attempt == COMMIT_ATTEMPTS:
                log.warning(
                    "memory batch tied on updated_at %d times; running its %d end users one by one",
                    attempt,
                    len(pending),
                )
        except DatabaseError as exc:
            log.warning(
                "memory batch refused (%s); running its %d end users one by one", type(exc).__name__, len(pending)
            )
            break
    if finished:
        due.finish_many(finished, now)
    return [], list(pending)


def _commit(
    pending: dict[int, _Pending], finished: dict[int, bool], now: datetime, alone: list[int], *, retry: bool = False
) -> list[MemoryRun]:
    locked = memories_locked(p.memory.pk for p in pending.values())
    changes = []
    for pk, item in pending.items():
        memory, inp, outcome, results = locked.get(item.memory.pk), item.inp, item.outcome, item.results
        if memory is None or not _unchanged(memory, item.memory):
            alone.append(pk)  # changed since it was read: read again, alone
            continue
        read_to = max([m["created_at"] for m in inp["messages"]] + [a["created_at"] for a in inp["actions"]])
        audit = Audit(
            kind=MemoryRun.Kind.QUIET,
            engine=results[0].engine if results else "",
            dropped=dict(outcome.dropped),
            messages_read=len(inp["messages"]),
            actions_read=len(inp["actions"]),
            read_from=item.memory.read_up_to,
            read_to=read_to,
            duration_ms=int((time.monotonic() - item.started) * 1000),
            input_tokens=sum(r.input_tokens for r in results),
            output_tokens=sum(r.output_tokens for r in results),
        )
        changes.append(
            plan_run(memory=memory, lines=outcome.lines, audit=audit, more_to_read=inp["read_to"] < now, now=now)
        )
    free_times = FreeTimes(spread_microseconds=RETRY_SPREAD_MICROSECONDS if retry else 0)
    return commit_changes(changes, now=now, free_times=free_times, finished=finished)
