"""One framework for the team's long work, Try and Apply: a job row (`memory.models.Job`) worked
by django-q tasks that take its id only.

What every kind of job gets from here, written once:
- start: one active job per agent and kind, refused by the database (a second start is the kind's
  `<kind>_running` error, never a second job);
- the stepper: a task works for at most its budget, then queues the next; cancel is honoured
  between two units of work; safe to deliver twice and after a crash (the kind's step skips what a
  unit already recorded);
- cancel: a queued job stops at once, a running one after the unit it is on;
- the heartbeat and the stalled check (no sign of life for STALLED_AFTER), the same for the pages,
  Try's start, Apply's Resume and `ops.health`;
- resume: a stalled job is queued again; a kind may also revive one that stopped.

A kind (`JobKind`) names its model and its django-q task. Its step callback does one task's work,
given the job and a `Budget`, and says how it ended: DONE, CONTINUED (the budget is spent: the
next task goes on), STOPPED (cancelled or finished meanwhile), or it raises `JobFailed` with the
message the team reads.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from django.db import IntegrityError, transaction
from django.db.models import Count, Min
from django.db.models.functions import Coalesce
from django.utils import timezone

from agents.errors import AppError
from memory.models import Job

STALLED_AFTER = timedelta(minutes=5)  # an active job with no sign of life this long is stalled
DONE, CONTINUED, STOPPED, GONE = "done", "continued", "stopped", "gone"

J = TypeVar("J", bound=Job)


@dataclass(frozen=True)
class JobKind(Generic[J]):
    model: type[J]
    task: str  # the django-q dotted name of the step (`memory.tasks.*`: queued tasks name it)
    group: str
    name: str  # "Try", "Apply": in the codes (`try_running`) and the messages the team reads
    article: str = "A"

    @property
    def code(self) -> str:
        return self.name.lower()

    def running_error(self) -> AppError:
        return AppError(
            f"{self.code}_running",
            f"{self.article} {self.name} is already running for this agent. Wait for it, or cancel it.",
        )


class JobFailed(Exception):
    """A step cannot go on: the job ends as failed, with `message` for the team."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class Budget:
    """The time one task may work (then the next task goes on), measured from its start."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.started = time.monotonic()

    @property
    def spent(self) -> bool:
        return time.monotonic() - self.started > self.seconds


def job_enqueue(kind: JobKind[Any], job: Job) -> None:
    from django_q.tasks import async_task

    async_task(kind.task, job.pk, group=kind.group)


def job_is_stalled(job: Job, now: datetime | None = None) -> bool:
    """Active, and no sign of life (heartbeat, start, creation) for STALLED_AFTER."""
    now = now or timezone.now()
    return job.is_active and job.last_sign_of_life < now - STALLED_AFTER


def job_backlog(model: type[Job]) -> tuple[int, datetime | None]:
    """How many jobs of a kind are active, and the oldest of their last signs of life."""
    row = model._default_manager.filter(status__in=Job.ACTIVE).aggregate(
        waiting=Count("id"), oldest=Min(Coalesce("heartbeat_at", "started_at", "created_at"))
    )
    return row["waiting"], row["oldest"]


def job_heartbeat(model: type[Job], job_id: int, *, now: datetime | None = None, **progress: Any) -> None:
    """A sign of life, with the progress that goes with it."""
    model._default_manager.filter(pk=job_id).update(heartbeat_at=now or timezone.now(), **progress)


def job_finish(model: type[Job], job_id: int, status: str, *, error: str = "", now: datetime | None = None) -> None:
    """End an active job (one already ended stays as it ended)."""
    now = now or timezone.now()
    model._default_manager.filter(pk=job_id, status__in=Job.ACTIVE).update(
        status=status, error=error[:200], finished_at=now, heartbeat_at=now
    )


def job_start(kind: JobKind[J], **fields: Any) -> J:
    """Create the job and queue its first step. Refuses (`<kind>_running`) while another job of the
    kind is active for the agent."""
    try:
        with transaction.atomic():
            job = kind.model._default_manager.create(**fields)
    except IntegrityError:
        raise kind.running_error() from None
    job_enqueue(kind, job)
    job.refresh_from_db()
    return job


def job_cancel(*, job: J, now: datetime | None = None) -> J:
    """Ask a job to stop: a queued one stops at once, a running one after the unit it is on."""
    now = now or timezone.now()
    with transaction.atomic():
        job = type(job)._default_manager.select_for_update().get(pk=job.pk)
        if job.is_active:
            job.cancel_requested = True
            fields = ["cancel_requested"]
            if job.status == Job.Status.QUEUED:
                job.status, job.finished_at = Job.Status.CANCELLED, now
                fields += ["status", "finished_at"]
            job.save(update_fields=fields)
    return job


def job_going_on(model: type[Job], job_id: int) -> bool:
    """Between two units of work: the job is still active and nobody asked it to stop."""
    status, cancel = model._default_manager.values_list("status", "cancel_requested").get(pk=job_id)
    return status in Job.ACTIVE and not cancel


def _stopped(model: type[Job], job_id: int) -> str:
    """A job found stopped between two units: a cancel asked for is recorded; its status."""
    status, cancel = model._default_manager.values_list("status", "cancel_requested").get(pk=job_id)
    if status in Job.ACTIVE and cancel:
        job_finish(model, job_id, Job.Status.CANCELLED)
        return Job.Status.CANCELLED
    return status


def _mark_running(job: Job) -> None:
    now = timezone.now()
    moved = (
        type(job)
        ._default_manager.filter(pk=job.pk, status=Job.Status.QUEUED, cancel_requested=False)
        .update(status=Job.Status.RUNNING, started_at=now, heartbeat_at=now)
    )
    if moved:
        job.refresh_from_db(fields=["status", "started_at", "heartbeat_at", "cancel_requested"])


def job_step(
    kind: JobKind[J],
    job_id: int,
    *,
    step: Callable[[J, Budget], str],
    budget_seconds: float,
    enqueue_next: bool = True,
    related: Sequence[str] = (),
) -> str:
    """One task of a job: mark it running, let `step` work for up to `budget_seconds`, then queue
    the next task or end the job. Answers "gone", "continued" or the job's status."""
    job = kind.model._default_manager.select_related(*related).filter(pk=job_id).first()
    if job is None or not job.is_active:
        return GONE if job is None else job.status
    _mark_running(job)
    if job.cancel_requested:
        return _stopped(kind.model, job_id)
    try:
        outcome = step(job, Budget(budget_seconds))
    except JobFailed as exc:
        job_finish(kind.model, job_id, Job.Status.FAILED, error=exc.message)
        return Job.Status.FAILED
    if outcome == CONTINUED:
        if enqueue_next:
            job_enqueue(kind, job)
        return CONTINUED
    if outcome == STOPPED:
        return _stopped(kind.model, job_id)
    job_finish(kind.model, job_id, Job.Status.DONE)
    return Job.Status.DONE


def job_resume(kind: JobKind[J], *, job: J, revive: Callable[[J], list[str]], now: datetime | None = None) -> J:
    """Go on with a job: one that `revive` can bring back (it changes the locked job and names the
    fields it changed; an empty list when it cannot), or one whose worker died (stalled). Refuses
    anything else (`<kind>_not_resumable`): a live job must not run twice."""
    now = now or timezone.now()
    try:
        with transaction.atomic():
            job = kind.model._default_manager.select_for_update().get(pk=job.pk)
            if revived := revive(job):
                job.status, job.error, job.finished_at, job.heartbeat_at = Job.Status.RUNNING, "", None, now
                job.save(update_fields=["status", "error", "finished_at", "heartbeat_at", *revived])
            elif job_is_stalled(job, now):
                job.heartbeat_at = now
                job.save(update_fields=["heartbeat_at"])
            else:
                raise AppError(
                    f"{kind.code}_not_resumable",
                    f"This {kind.name} is not stalled or stopped; there is nothing to resume.",
                )
    except IntegrityError:
        raise AppError(f"{kind.code}_running", f"Another {kind.name} is running for this agent.") from None
    job_enqueue(kind, job)
    job.refresh_from_db()
    return job


def job_resume_stalled(kind: JobKind[J], *, revive: Callable[[J], list[str]], now: datetime | None = None) -> int:
    """Queue again every stalled job of a kind (its step task was lost with a killed cluster).
    Returns how many."""
    now = now or timezone.now()
    resumed = 0
    for job in kind.model._default_manager.filter(status__in=Job.ACTIVE):
        if job_is_stalled(job, now):
            try:
                job_resume(kind, job=job, revive=revive, now=now)
                resumed += 1
            except AppError:  # it moved or finished meanwhile
                pass
    return resumed


def never_revived(job: Job) -> list[str]:
    """For a kind that only goes on when stalled: nothing brings an ended job back."""
    return []
