"""Try on past conversations as a background job (R18): a POST starts it, a django-q task runs the
model person by person, the page shows progress and then the result, and it can be cancelled.
Never a GET that calls a model: an image tag on another site cannot make a member's browser spend
model calls.

What Try reads and computes is `memory.tools.trial` (`trial_run` on one person at a time); this module
only runs it as a job. Like Apply:
- tasks take the job's id only; each works for at most TASK_SECONDS, then queues the next;
- safe to deliver twice and after a crash: a person already tried has a row and is skipped;
- cancel is honoured between two people;
- one Try at a time per agent (a stalled one, with no sign of life for STALLED_AFTER, is given up
  when the next starts).

It saves nothing but its own rows: no memory, no `read_up_to`, no run row, no usage. The people's
rows are deleted with their end user (an erase), and only the newest KEEP_JOBS jobs of an agent
are kept.
"""

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from agents.engines import get_engine
from agents.errors import AppError
from agents.models import Agent, EndUser
from memory.models import TrialJob, TrialJobPerson
from memory.tools import trial

log = logging.getLogger(__name__)

TASK = "memory.tasks.trial_job_step"
TASK_SECONDS = 20
STALLED_AFTER = timedelta(minutes=5)
KEEP_JOBS = 5


def _enqueue(job: TrialJob) -> None:
    from django_q.tasks import async_task

    async_task(TASK, job.pk, group="memory-try")


def trial_is_stalled(job: TrialJob, now: datetime | None = None) -> bool:
    now = now or timezone.now()
    last_sign = job.heartbeat_at or job.started_at or job.created_at
    return job.is_active and last_sign < now - STALLED_AFTER


def _finish(job_id: int, status: str, *, error: str = "", now: datetime | None = None) -> None:
    now = now or timezone.now()
    TrialJob.objects.filter(pk=job_id, status__in=TrialJob.ACTIVE).update(
        status=status, error=error[:200], finished_at=now, heartbeat_at=now
    )


def trial_start(
    *,
    agent: Agent,
    config: dict,
    draft: bool,
    people: int,
    user=None,
    now: datetime | None = None,
    include_open: bool = False,
) -> TrialJob:
    """Start a Try of `config` on the newest `people` end users (with `include_open`, their chats
    still inside the quiet window are read too). Refuses (AppError) on a plan without memory, a size
    outside 1..MAX_PEOPLE, and while another Try of the agent runs."""
    if not agent.team.has_memory:
        raise AppError("plan_required", "Memory comes with the Team plan and up.", status=403)
    if not 1 <= people <= trial.MAX_PEOPLE:
        raise AppError("invalid_people", f"Try runs on 1 to {trial.MAX_PEOPLE} end users.", field="n")
    now = now or timezone.now()
    for stalled in TrialJob.objects.filter(agent=agent, status__in=TrialJob.ACTIVE):
        if trial_is_stalled(stalled, now):
            _finish(
                stalled.pk,
                TrialJob.Status.FAILED,
                error="Its worker stopped answering; a new Try took its place.",
                now=now,
            )
    candidates = trial.trial_candidates(agent, people)
    try:
        with transaction.atomic():
            job = TrialJob.objects.create(
                agent=agent,
                config=config,
                draft=draft,
                people=people,
                include_open=include_open,
                end_user_ids=[end_user.pk for end_user in candidates],
                created_by=user,
                as_of=now,
                created_at=now,
            )
    except IntegrityError:
        raise AppError("try_running", "A Try is already running for this agent. Wait for it, or cancel it.") from None
    old = (
        TrialJob.objects.filter(agent=agent)
        .exclude(status__in=TrialJob.ACTIVE)
        .order_by("-created_at", "-id")[KEEP_JOBS:]
    )
    TrialJob.objects.filter(pk__in=[j.pk for j in old]).delete()
    _enqueue(job)
    job.refresh_from_db()
    return job


def trial_cancel(*, job: TrialJob, now: datetime | None = None) -> TrialJob:
    """Ask a Try to stop: a queued one stops at once, a running one after the person it is on."""
    now = now or timezone.now()
    with transaction.atomic():
        job = TrialJob.objects.select_for_update().get(pk=job.pk)
        if job.is_active:
            job.cancel_requested = True
            fields = ["cancel_requested"]
            if job.status == TrialJob.Status.QUEUED:
                job.status, job.finished_at = TrialJob.Status.CANCELLED, now
                fields += ["status", "finished_at"]
            job.save(update_fields=fields)
    return job


def _person_result(person: trial.TrialPerson) -> dict:
    return {
        "before": person.before,
        "after": person.after,
        "rows": [[row.status, row.old, row.new] for row in person.rows],
        "added": person.added,
        "replaced": person.replaced,
        "removed": person.removed,
        "messagesRead": person.messages_read,
        "actionsRead": person.actions_read,
        "beganAt": person.began_at.isoformat() if person.began_at else None,
        "moreUnread": person.more_unread,
        "openChats": person.open_chats,
        "error": person.error,
        "changed": person.changed and not person.error,
    }


def trial_job_step(job_id: int, *, engine=None, budget_seconds: float = TASK_SECONDS, enqueue_next: bool = True) -> str:
    """Try the job's people in order for up to `budget_seconds`, then queue the next step (or
    finish). A person already tried (a row exists) is skipped; an end user erased meanwhile too."""
    job = TrialJob.objects.select_related("agent__team").filter(pk=job_id).first()
    if job is None or not job.is_active:
        return "gone" if job is None else job.status
    now = timezone.now()
    TrialJob.objects.filter(pk=job_id, status=TrialJob.Status.QUEUED, cancel_requested=False).update(
        status=TrialJob.Status.RUNNING, started_at=now, heartbeat_at=now
    )
    engine = engine or get_engine()
    TrialJob.objects.filter(pk=job_id).update(engine=engine.name[:40])
    tried = set(TrialJobPerson.objects.filter(job_id=job_id).values_list("end_user_id", flat=True))
    started = time.monotonic()
    for position, end_user_id in enumerate(job.end_user_ids):
        if end_user_id in tried:
            continue
        status, cancel = TrialJob.objects.values_list("status", "cancel_requested").get(pk=job_id)
        if status not in TrialJob.ACTIVE:
            return status
        if cancel:
            _finish(job_id, TrialJob.Status.CANCELLED)
            return TrialJob.Status.CANCELLED
        end_user = EndUser.objects.filter(pk=end_user_id, agent_id=job.agent_id).first()
        try:
            result = trial.trial_run(
                agent=job.agent,
                config=job.config,
                people=1,
                now=job.as_of,
                engine=engine,
                end_users=[end_user] if end_user else [],
                include_open=job.include_open,
            )
        except AppError as exc:  # the plan lost memory meanwhile, say
            _finish(job_id, TrialJob.Status.FAILED, error=exc.message)
            return TrialJob.Status.FAILED
        except Exception:
            log.exception("try job %s failed on end user %s", job_id, end_user_id)
            _finish(
                job_id, TrialJob.Status.FAILED, error="Something went wrong on our side; nothing was saved. Try again."
            )
            return TrialJob.Status.FAILED
        with transaction.atomic():
            if result.people and EndUser.objects.filter(pk=end_user_id).exists():
                TrialJobPerson.objects.get_or_create(
                    job_id=job_id,
                    end_user_id=end_user_id,
                    defaults={"position": position, "result": _person_result(result.people[0])},
                )
            TrialJob.objects.filter(pk=job_id, done__lt=position + 1).update(
                done=position + 1, heartbeat_at=timezone.now()
            )
        if time.monotonic() - started > budget_seconds and position + 1 < len(job.end_user_ids):
            if enqueue_next:
                _enqueue(job)
            return "continued"
    _finish(job_id, TrialJob.Status.DONE)
    return TrialJob.Status.DONE


# --- What the page shows -----------------------------------------------------------------------


@dataclass
class ShownRow:
    status: str
    old: str | None
    new: str | None


@dataclass
class ShownPerson:
    end_user: EndUser
    rows: list[ShownRow] = field(default_factory=list)
    added: int = 0
    replaced: int = 0
    removed: int = 0
    messages_read: int = 0
    actions_read: int = 0
    began_at: datetime | None = None
    more_unread: bool = False
    open_chats: int = 0
    error: str = ""
    changed: bool = False


def trial_people(job: TrialJob) -> list[ShownPerson]:
    shown = []
    for row in job.persons.select_related("end_user").order_by("position"):
        r = row.result
        shown.append(
            ShownPerson(
                end_user=row.end_user,
                rows=[ShownRow(*item) for item in r["rows"]],
                added=r["added"],
                replaced=r["replaced"],
                removed=r["removed"],
                messages_read=r["messagesRead"],
                actions_read=r["actionsRead"],
                began_at=parse_datetime(r["beganAt"]) if r["beganAt"] else None,
                more_unread=r["moreUnread"],
                open_chats=r.get("openChats", 0),
                error=r["error"],
                changed=r["changed"],
            )
        )
    return shown


def trial_latest(agent: Agent) -> TrialJob | None:
    return TrialJob.objects.filter(agent=agent).order_by("-created_at", "-id").first()


def trial_for_agent(agent: Agent, job_id: int) -> TrialJob | None:
    return TrialJob.objects.filter(agent=agent, pk=job_id).select_related("created_by").first()
