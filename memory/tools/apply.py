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
through `actions.plan_apply` (all written by `rows.commit_changes`: one UPDATE of the memories,
one INSERT of the audit rows) and moves the job's counts and cursor with them. A review that raises records those
before it first.

It runs as a job of `memory.tools.jobs`, the framework it shares with Try (start, the stepper,
cancel, heartbeat, the stalled check, resume). Tasks take the job's id only. One task works for at
most TASK_SECONDS, then queues the next, so a task stays well inside the cluster's timeout even
with a slow model.
"""

import logging
import time
from collections import Counter
from dataclasses import dataclass
from functools import partial

from django.db import transaction
from django.utils import timezone

from agents.engines import EngineError, EngineResult, concurrently, get_engine
from agents.errors import AppError
from agents.models import Agent, AgentVersion
from memory.models import ApplyJob, Memory, MemoryRun
from memory.store.actions import Audit, plan_apply, plan_apply_failure
from memory.store.rows import FreeTimes, MemoryChange, commit_changes
from memory.tools import jobs
from memory.writer import run as writer_run
from memory.writer.operations import Outcome, propose

log = logging.getLogger(__name__)

BATCH_SIZE = 50  # memories read from the database at a time
TASK_SECONDS = 20  # then the next task goes on (a model call may take OPENAI_TIMEOUT x retries more)
MAX_CONSECUTIVE_FAILURES = 5  # the model is down: stop, keep the cursor, let the team resume
STALLED_AFTER = jobs.STALLED_AFTER  # an active job with no heartbeat this long can be resumed
NO_NEW_INPUT: dict[str, list] = {"messages": [], "actions": [], "replies": []}
TASK = "memory.tasks.apply_job_step"
APPLY = jobs.JobKind(model=ApplyJob, task=TASK, group="memory-apply", name="Apply", article="An")
# What recording a batch moves on the job (with its heartbeat).
RECORDED = ["reviewed", "failed", "failed_ids", "retry_ids", "changed", "replaced", "removed", "dropped", "cursor"]

apply_is_stalled = jobs.job_is_stalled  # the framework's check, under the name the pages call


def _reviewable(agent_id: int, job: ApplyJob):
    """The memories the job covers that still hold lines (a stopped memory is empty)."""
    return Memory.objects.filter(agent_id=agent_id, id__gt=job.cursor, id__lte=job.last_memory_id).exclude(text="")


def apply_start(*, agent: Agent, user=None, now=None) -> ApplyJob:
    """Start reviewing every memory of the agent against its published version. Refuses (AppError)
    on a plan without memory, and while another Apply of the agent is queued or running."""
    if not agent.team.has_memory:
        raise AppError("plan_required", "Memory comes with the Team plan and up.", status=403)
    now = now or timezone.now()
    version = AgentVersion.objects.published(agent)
    memories = Memory.objects.filter(agent=agent).exclude(text="")
    last_id = Memory.objects.filter(agent=agent).order_by("-id").values_list("id", flat=True).first() or 0
    total = memories.filter(id__lte=last_id).count()
    return jobs.job_start(
        APPLY, agent=agent, version=version, last_memory_id=last_id, total=total, created_by=user, created_at=now
    )


def apply_cancel(*, job: ApplyJob, now=None) -> ApplyJob:
    """Ask a job to stop. A queued job stops at once; a running one after the memory it is on."""
    return jobs.job_cancel(job=job, now=now)


def _revive(job: ApplyJob) -> list[str]:
    """A job that stopped after errors, or a finished one with memories whose review failed, goes
    on: those memories are reviewed again, first, then the job goes on from its cursor."""
    retry = [pk for pk in job.failed_ids if pk not in job.retry_ids]
    if not (job.status == ApplyJob.Status.FAILED or (job.status == ApplyJob.Status.DONE and retry)):
        return []
    job.retry_ids, job.failed_ids = job.retry_ids + retry, []
    job.failed = max(0, job.failed - len(retry))
    return ["retry_ids", "failed_ids", "failed"]


def apply_resume(*, job: ApplyJob, now=None) -> ApplyJob:
    """Go on: a job that stopped after errors, one whose worker died (no heartbeat for
    STALLED_AFTER), or a finished one with memories whose review failed. Those failed memories are
    reviewed again first, then the job goes on from its cursor. Refuses anything else: a live job
    must not run twice."""
    return jobs.job_resume(APPLY, job=job, revive=_revive, now=now)


def apply_resume_stalled(now=None) -> int:
    """Queue again, from its cursor, every Apply whose step was lost. Returns how many."""
    return jobs.job_resume_stalled(APPLY, revive=_revive, now=now)


@dataclass
class _Review:
    memory: Memory  # as read: its review is recorded only if nobody changed it since
    outcome: Outcome | None = None  # None when the review failed (error_code says why)
    result: EngineResult | None = None
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


def _take(job: ApplyJob, memory_id: int, *, retry: bool) -> bool:
    """Whether this review is still to record (another delivery of the task may have recorded it).
    A retried memory is taken off `retry_ids`."""
    if not retry:
        return job.cursor < memory_id
    if memory_id not in job.retry_ids:
        return False
    job.retry_ids = [pk for pk in job.retry_ids if pk != memory_id]
    return True


def _record_failure(
    job: ApplyJob, review: _Review, current: Memory | None, changes: list[MemoryChange], engine, now
) -> None:
    """A review that failed: the memory stays in `failed_ids` (Resume reviews it again) and gets a
    failed audit row."""
    job.failed += 1
    job.failed_ids = [*job.failed_ids, review.memory.pk]
    if current is None:
        return
    audit = Audit(
        kind=MemoryRun.Kind.APPLY,
        actor_id=job.created_by_id,
        engine=(engine or get_engine()).name,
        error=review.error_code or "",
        duration_ms=review.duration_ms,
    )
    changes.append(plan_apply_failure(memory=current, audit=audit, now=now))


def _record_review(job: ApplyJob, review: _Review, current: Memory | None, changes: list[MemoryChange], now) -> None:
    """A review that answered: its change is committed only if nobody changed the memory since it
    was read."""
    outcome, result = review.outcome, review.result
    assert outcome is not None and result is not None  # it answered: no error_code
    job.reviewed += 1
    if current is None or not outcome.changed:
        return
    if current.text != review.memory.text or current.stopped_at is not None:  # changed since it was read
        return
    audit = Audit(
        kind=MemoryRun.Kind.APPLY,
        actor_id=job.created_by_id,
        engine=result.engine,
        dropped=dict(outcome.dropped),
        duration_ms=review.duration_ms,
        input_tokens=result.input_tokens,
        output_tokens=result.output_tokens,
    )
    changes.append(plan_apply(memory=current, lines=outcome.lines, audit=audit, now=now))
    job.changed += 1
    job.replaced += outcome.replaced
    job.removed += outcome.removed


def _record(job: ApplyJob, reviews: list[_Review], engine, now, *, retry: bool = False) -> bool:
    """Record reviews in one transaction: each changed memory through `plan_apply` (its audit
    row), the job's counts and cursor with them. Returns whether the job goes on (False when it
    was cancelled or ended meanwhile: nothing of the batch is recorded). `retry`: memories whose
    review failed before (taken from `retry_ids`, not the cursor). A review already recorded (a
    second delivery of the task) is skipped; a memory changed since it was read is left as it is."""
    with transaction.atomic():
        locked_job = ApplyJob.objects.select_for_update().get(pk=job.pk)
        if not locked_job.is_active or locked_job.cancel_requested:
            return False
        changes: list[MemoryChange] = []
        ids = [r.memory.pk for r in reviews]
        locked = {m.pk: m for m in Memory.objects.select_for_update().filter(pk__in=ids).order_by("pk")}
        dropped = Counter(locked_job.dropped)
        for review in reviews:
            if not _take(locked_job, review.memory.pk, retry=retry):
                continue
            current = locked.get(review.memory.pk)
            if review.error_code:
                _record_failure(locked_job, review, current, changes, engine, now)
            else:
                dropped += review.outcome.dropped if review.outcome else Counter()
                _record_review(locked_job, review, current, changes, now)
            if not retry:
                locked_job.cursor = review.memory.pk
        commit_changes(changes, now=now, free_times=FreeTimes())
        locked_job.dropped = dict(dropped)
        locked_job.heartbeat_at = now  # the job's heartbeat moves with what it recorded
        locked_job.save(update_fields=[*RECORDED, "heartbeat_at"])
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


def _review_batch(reviews: list[_Review], memories: list[Memory], config: dict, engine, budget, streak: int) -> int:
    """Review memories into `reviews` until the batch ends, the model fails MAX_CONSECUTIVE_FAILURES
    times in a row or the budget is spent. A model's reviews go in waves of its concurrency, in
    flight together (`engines.concurrently`; the offline engine's one at a time); the checks come
    after each wave. Returns the failures in a row so far."""
    engine = engine or writer_run.get_engine()  # the writer's, as `propose` resolves it
    wave = max(1, getattr(engine, "concurrency", 1))
    for start in range(0, len(memories), wave):
        now = timezone.now()
        for review in concurrently(
            engine, partial(_review, config=config, engine=engine, now=now), memories[start : start + wave]
        ):
            reviews.append(review)
            streak = streak + 1 if review.error_code else 0
        if streak >= MAX_CONSECUTIVE_FAILURES or budget.spent:
            break
    return streak


def _review_memories(job: ApplyJob, budget: jobs.Budget, *, engine=None) -> str:
    """Apply's step: batch after batch from the cursor (the retried memories first), each batch
    recorded in one transaction, even when the worker is stopping on an error."""
    streak = 0  # reviews failed in a row
    while True:
        job.refresh_from_db(fields=["cursor", "retry_ids"])
        memories, retrying = _next_batch(job)
        if not memories:
            return jobs.DONE
        reviews: list[_Review] = []
        try:
            streak = _review_batch(reviews, memories, job.version.config, engine, budget, streak)
        finally:  # what was reviewed is recorded, even when the worker is stopping on an error
            going_on = _record(job, reviews, engine, timezone.now(), retry=retrying) if reviews else True
        if not going_on:
            return jobs.STOPPED
        if streak >= MAX_CONSECUTIVE_FAILURES:
            code = reviews[-1].error_code
            raise jobs.JobFailed(f"The model failed {streak} times in a row ({code}). Resume when it is back.")
        if budget.spent:
            return jobs.CONTINUED


def apply_job_step(job_id: int, *, engine=None, budget_seconds: float = TASK_SECONDS, enqueue_next: bool = True) -> str:
    """Work on the job for up to `budget_seconds`, then queue the next step (or finish).
    Safe to deliver twice and safe after a crash: it goes on from the job's cursor."""
    step = partial(_review_memories, engine=engine)
    return jobs.job_step(
        APPLY, job_id, step=step, budget_seconds=budget_seconds, enqueue_next=enqueue_next, related=["version"]
    )


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
    "apply_resume_stalled",
    "apply_start",
]
