"""Apply to what is already kept (R19): review every memory of an agent against its published
instructions, as a background django-q job.

Guarantees:
- the review runs the writer in review mode (`writer.propose(mode="review")`), so the guards in
  code drop any operation that adds a line: a memory can only lose or change lines;
- each changed memory gets exactly one audit row of kind `apply` (counts, never words);
- resumable: the job's `cursor` (the id of the last memory it finished) moves in the same
  transaction as that memory's change, so after a crash or a second delivery of a task the job
  goes on from where it was and never reviews a memory twice;
- a memory changed by someone else while the model was reading it is left as they wrote it;
- cancel is honoured between two batches of reviews; counts so far stay.

Reviews are recorded in batches (up to BATCH_SIZE memories, fewer when the task's time is up or
the model fails): one transaction locks the job and the batch's memories, commits each change
through `memory_commit` (with a `CommitBatch`: one UPDATE of the memories, one INSERT of the
audit rows) and moves the job's counts and cursor with them. A review that raises records those
before it first.

Tasks take the job's id only. One task works for at most TASK_SECONDS, then queues the next, so
a task stays well inside the cluster's timeout even with a slow model.
"""

import logging
import time
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.engines import EngineError, get_engine
from agents.errors import AppError
from agents.models import Agent, AgentVersion
from memory.models import ApplyJob, Memory, MemoryRun
from memory.store.commit import CommitBatch, memory_commit
from memory.writer.run import propose

log = logging.getLogger(__name__)

BATCH_SIZE = 50  # memories read from the database at a time
TASK_SECONDS = 20  # then the next task goes on (a model call may take OPENAI_TIMEOUT x retries more)
MAX_CONSECUTIVE_FAILURES = 5  # the model is down: stop, keep the cursor, let the team resume
STALLED_AFTER = timedelta(minutes=5)  # an active job with no heartbeat this long can be resumed
NO_NEW_INPUT = {"messages": [], "actions": [], "replies": []}
TASK = "memory.tasks.apply_job_step"


def _reviewable(agent_id: int, job: ApplyJob):
    """The memories the job covers that still hold lines (a stopped memory is empty)."""
    return Memory.objects.filter(agent_id=agent_id, id__gt=job.cursor, id__lte=job.last_memory_id).exclude(text="")


def _enqueue(job: ApplyJob) -> None:
    from django_q.tasks import async_task

    async_task(TASK, job.pk, group="memory-apply")


def apply_start(*, agent: Agent, user=None, now=None) -> ApplyJob:
    """Start reviewing every memory of the agent against its published version. Refuses (AppError)
    on a plan without memory, and while another Apply of the agent is queued or running."""
    if not agent.team.has_memory:
        raise AppError("plan_required", "Memory comes with the Team plan and up.", status=403)
    now = now or timezone.now()
    version = AgentVersion.objects.published(agent)
    memories = Memory.objects.filter(agent=agent).exclude(text="")
    last_id = Memory.objects.filter(agent=agent).order_by("-id").values_list("id", flat=True).first() or 0
    try:
        with transaction.atomic():
            job = ApplyJob.objects.create(
                agent=agent,
                version=version,
                last_memory_id=last_id,
                total=memories.filter(id__lte=last_id).count(),
                created_by=user,
                created_at=now,
            )
    except IntegrityError:
        raise AppError(
            "apply_running", "An Apply is already running for this agent. Wait for it, or cancel it."
        ) from None
    _enqueue(job)
    job.refresh_from_db()
    return job


def apply_cancel(*, job: ApplyJob, now=None) -> ApplyJob:
    """Ask a job to stop. A queued job stops at once; a running one after the memory it is on."""
    now = now or timezone.now()
    with transaction.atomic():
        job = ApplyJob.objects.select_for_update().get(pk=job.pk)
        if not job.is_active:
            return job
        job.cancel_requested = True
        fields = ["cancel_requested"]
        if job.status == ApplyJob.Status.QUEUED:
            job.status, job.finished_at = ApplyJob.Status.CANCELLED, now
            fields += ["status", "finished_at"]
        job.save(update_fields=fields)
    return job


def apply_is_stalled(job: ApplyJob, now=None) -> bool:
    now = now or timezone.now()
    last_sign = job.heartbeat_at or job.started_at or job.created_at
    return job.is_active and last_sign < now - STALLED_AFTER


def apply_resume(*, job: ApplyJob, now=None) -> ApplyJob:
    """Go on: a job that stopped after errors, one whose worker died (no heartbeat for
    STALLED_AFTER), or a finished one with memories whose review failed. Those failed memories are
    reviewed again first, then the job goes on from its cursor. Refuses anything else: a live job
    must not run twice."""
    now = now or timezone.now()
    try:
        with transaction.atomic():
            job = ApplyJob.objects.select_for_update().get(pk=job.pk)
            retry = [pk for pk in job.failed_ids if pk not in job.retry_ids]
            if job.status == ApplyJob.Status.FAILED or (job.status == ApplyJob.Status.DONE and retry):
                job.status, job.error, job.finished_at = ApplyJob.Status.RUNNING, "", None
                job.heartbeat_at = now
                # The memories whose review failed are reviewed again, first.
                job.retry_ids, job.failed_ids = job.retry_ids + retry, []
                job.failed = max(0, job.failed - len(retry))
                job.save(
                    update_fields=[
                        "status",
                        "error",
                        "finished_at",
                        "heartbeat_at",
                        "retry_ids",
                        "failed_ids",
                        "failed",
                    ]
                )
            elif apply_is_stalled(job, now):
                job.heartbeat_at = now
                job.save(update_fields=["heartbeat_at"])
            else:
                raise AppError(
                    "apply_not_resumable", "This Apply is not stalled or stopped; there is nothing to resume."
                )
    except IntegrityError:
        raise AppError("apply_running", "Another Apply is running for this agent.") from None
    _enqueue(job)
    job.refresh_from_db()
    return job


def _finish(job_id: int, status: str, *, error: str = "", now=None) -> None:
    now = now or timezone.now()
    ApplyJob.objects.filter(pk=job_id, status__in=ApplyJob.ACTIVE).update(
        status=status, error=error[:200], finished_at=now, heartbeat_at=now
    )


@dataclass
class _Review:
    memory: Memory  # as read: its review is recorded only if nobody changed it since
    outcome: object = None
    result: object = None
    error_code: str | None = None
    duration_ms: int = 0


def _review(memory: Memory, config: dict, engine, now) -> _Review:
    """Ask the model (or the offline rules) to review one memory; saves nothing."""
    started = time.monotonic()
    review = _Review(memory=memory)
    try:
        review.outcome, review.result = propose(
            lines=memory.lines, inp=NO_NEW_INPUT, config=config, now=now, mode="review", engine=engine
        )
    except EngineError as exc:
        review.error_code = exc.code
    review.duration_ms = int((time.monotonic() - started) * 1000)
    return review


def _record(job: ApplyJob, reviews: list[_Review], engine, now, *, retry: bool = False) -> bool:
    """Record reviews in one transaction: each changed memory through `memory_commit` (its audit
    row), the job's counts and cursor with them. Returns whether the job is still running.
    `retry`: memories whose review failed before (taken from `retry_ids`, not the cursor). A failure
    keeps the memory in `failed_ids`, so Resume reviews it again. A review already recorded (a
    second delivery of the task) is skipped; a memory changed since it was read is left as it is."""
    with transaction.atomic():
        locked_job = ApplyJob.objects.select_for_update().get(pk=job.pk)
        if not locked_job.is_active:
            return False
        if locked_job.cancel_requested:
            locked_job.status, locked_job.finished_at = ApplyJob.Status.CANCELLED, now
            locked_job.save(update_fields=["status", "finished_at"])
            return False
        batch = CommitBatch(now)
        locked = {
            m.pk: m
            for m in Memory.objects.select_for_update().filter(pk__in=[r.memory.pk for r in reviews]).order_by("pk")
        }
        dropped = Counter(locked_job.dropped)
        for review in reviews:
            memory = review.memory
            if retry:
                if memory.pk not in locked_job.retry_ids:  # another delivery of this task already did it
                    continue
                locked_job.retry_ids = [pk for pk in locked_job.retry_ids if pk != memory.pk]
            elif locked_job.cursor >= memory.pk:  # another delivery of this task already did it
                continue
            current = locked.get(memory.pk)
            if review.error_code:
                locked_job.failed += 1
                locked_job.failed_ids = [*locked_job.failed_ids, memory.pk]
                if current is not None:
                    memory_commit(
                        current,
                        now=now,
                        kind=MemoryRun.Kind.APPLY,
                        status=MemoryRun.Status.FAILED,
                        run={
                            "engine": (engine or get_engine()).name,
                            "error": review.error_code[:200],
                            "duration_ms": review.duration_ms,
                        },
                        actor_id=locked_job.created_by_id,
                        batch=batch,
                    )
            else:
                outcome, result = review.outcome, review.result
                locked_job.reviewed += 1
                dropped += outcome.dropped
                unchanged_since_read = (
                    current is not None and current.text == memory.text and current.stopped_at is None
                )
                if outcome.changed and unchanged_since_read:
                    memory_commit(
                        current,
                        now=now,
                        kind=MemoryRun.Kind.APPLY,
                        lines=outcome.lines,
                        run={
                            "engine": result.engine,
                            "dropped": dict(outcome.dropped),
                            "duration_ms": review.duration_ms,
                            "input_tokens": result.input_tokens,
                            "output_tokens": result.output_tokens,
                        },
                        actor_id=locked_job.created_by_id,
                        batch=batch,
                    )
                    locked_job.changed += 1
                    locked_job.replaced += outcome.replaced
                    locked_job.removed += outcome.removed
            if not retry:
                locked_job.cursor = memory.pk
        batch.flush()
        locked_job.dropped = dict(dropped)
        locked_job.heartbeat_at = now
        locked_job.save(
            update_fields=[
                "reviewed",
                "failed",
                "failed_ids",
                "retry_ids",
                "changed",
                "replaced",
                "removed",
                "dropped",
                "cursor",
                "heartbeat_at",
            ]
        )
    return True


def _drop_retries(job_id: int, ids: list[int]) -> None:
    """Failed memories that are gone or empty since: nothing is left to review in them."""
    with transaction.atomic():
        locked_job = ApplyJob.objects.select_for_update().get(pk=job_id)
        gone = [pk for pk in locked_job.retry_ids if pk in ids]
        if gone:
            locked_job.retry_ids = [pk for pk in locked_job.retry_ids if pk not in gone]
            locked_job.reviewed += len(gone)
            locked_job.save(update_fields=["retry_ids", "reviewed"])


def _next_batch(job: ApplyJob) -> tuple[list[Memory], bool]:
    """The next memories to review: those queued again by Resume first, then from the cursor."""
    if job.retry_ids:
        found = list(Memory.objects.filter(pk__in=job.retry_ids).exclude(text="").order_by("id")[:BATCH_SIZE])
        missing = [pk for pk in job.retry_ids if pk not in {m.pk for m in found}]
        if missing and len(found) < BATCH_SIZE:
            _drop_retries(job.pk, missing)
        if found:
            return found, True
    return list(_reviewable(job.agent_id, job).order_by("id")[:BATCH_SIZE]), False


def apply_job_step(job_id: int, *, engine=None, budget_seconds: float = TASK_SECONDS, enqueue_next: bool = True) -> str:
    """Work on the job for up to `budget_seconds`, then queue the next step (or finish).
    Safe to deliver twice and safe after a crash: it goes on from the job's cursor."""
    job = ApplyJob.objects.select_related("version").filter(pk=job_id).first()
    if job is None or not job.is_active:
        return "gone" if job is None else job.status
    now = timezone.now()
    with transaction.atomic():
        moved = ApplyJob.objects.filter(pk=job_id, status=ApplyJob.Status.QUEUED, cancel_requested=False).update(
            status=ApplyJob.Status.RUNNING, started_at=now, heartbeat_at=now
        )
    if moved:
        job.refresh_from_db()
    if job.cancel_requested:
        _finish(job_id, ApplyJob.Status.CANCELLED)
        return ApplyJob.Status.CANCELLED
    config = job.version.config
    started = time.monotonic()
    consecutive_failures = 0
    while True:
        job.refresh_from_db(fields=["cursor", "retry_ids"])
        batch, retrying = _next_batch(job)
        if not batch:
            _finish(job_id, ApplyJob.Status.DONE)
            return ApplyJob.Status.DONE
        reviews: list[_Review] = []
        try:
            for memory in batch:
                reviews.append(_review(memory, config, engine, timezone.now()))
                consecutive_failures = consecutive_failures + 1 if reviews[-1].error_code else 0
                if consecutive_failures >= MAX_CONSECUTIVE_FAILURES or time.monotonic() - started > budget_seconds:
                    break
        finally:  # what was reviewed is recorded, even when the worker is stopping on an error
            running = _record(job, reviews, engine, timezone.now(), retry=retrying) if reviews else True
        if not running:
            return ApplyJob.objects.values_list("status", flat=True).get(pk=job_id)
        if consecutive_failures >= MAX_CONSECUTIVE_FAILURES:
            _finish(
                job_id,
                ApplyJob.Status.FAILED,
                error=f"The model failed {consecutive_failures} times in a row ({reviews[-1].error_code}). Resume when it is back.",
            )
            return ApplyJob.Status.FAILED
        if time.monotonic() - started > budget_seconds:
            if enqueue_next:
                _enqueue(job)
            return "continued"


def apply_latest(agent: Agent) -> ApplyJob | None:
    return ApplyJob.objects.filter(agent=agent).order_by("-created_at", "-id").first()


def apply_for_agent(agent: Agent, job_id: int) -> ApplyJob | None:
    return ApplyJob.objects.filter(agent=agent, pk=job_id).select_related("version", "created_by").first()


__all__ = [
    "apply_cancel",
    "apply_for_agent",
    "apply_is_stalled",
    "apply_job_step",
    "apply_latest",
    "apply_resume",
    "apply_start",
]
