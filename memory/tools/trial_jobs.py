"""Try on past conversations as a background job (R18): a POST starts it, a django-q task runs the
model person by person, the page shows progress and then the result, and it can be cancelled.
Never a GET that calls a model: an image tag on another site cannot make a member's browser spend
model calls.

What Try reads and computes is `memory.tools.trial` (`trial_run` on one person at a time); this module
only runs it as a job of `memory.tools.jobs`, the framework it shares with Apply:
- tasks take the job's id only; each works for at most TASK_SECONDS, then queues the next;
- safe to deliver twice and after a crash: a person already tried has a row and is skipped;
- cancel is honoured between two people;
- one Try at a time per agent (a stalled one, with no sign of life for `jobs.STALLED_AFTER`, is
  given up when the next starts, or queued again by `memory_health --resume-stalled`).

It saves nothing but its own rows: no memory, no `read_up_to`, no run row, no usage. The people's
rows are deleted with their end user (an erase), and only the newest KEEP_JOBS jobs of an agent
are kept.
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from agents.engines import get_engine
from agents.errors import AppError
from agents.models import Agent, EndUser
from memory.models import TrialJob, TrialJobPerson
from memory.tools import jobs, trial

log = logging.getLogger(__name__)

TASK = "memory.tasks.trial_job_step"
TASK_SECONDS = 20
KEEP_JOBS = 5
TRY = jobs.JobKind(model=TrialJob, task=TASK, group="memory-try", name="Try")

trial_is_stalled = jobs.job_is_stalled  # the framework's check, under the name the pages call


def _give_up_stalled(agent: Agent, now: datetime) -> None:
    for stalled in TrialJob.objects.filter(agent=agent, status__in=TrialJob.ACTIVE):
        if jobs.job_is_stalled(stalled, now):
            error = "Its worker stopped answering; a new Try took its place."
            jobs.job_finish(TrialJob, stalled.pk, TrialJob.Status.FAILED, error=error, now=now)


def _keep_newest(agent: Agent) -> None:
    """Only the newest KEEP_JOBS ended jobs of an agent are kept (and the active one)."""
    ended = TrialJob.objects.filter(agent=agent).exclude(status__in=TrialJob.ACTIVE)
    old = ended.order_by("-created_at", "-id")[KEEP_JOBS:]
    TrialJob.objects.filter(pk__in=[j.pk for j in old]).delete()


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
    outside 1..MAX_PEOPLE, and while another Try of the agent runs. A stalled Try is given up."""
    if not agent.team.has_memory:
        raise AppError("plan_required", "Memory comes with the Team plan and up.", status=403)
    if not 1 <= people <= trial.MAX_PEOPLE:
        raise AppError("invalid_people", f"Try runs on 1 to {trial.MAX_PEOPLE} end users.", field="n")
    now = now or timezone.now()
    _give_up_stalled(agent, now)
    _keep_newest(agent)
    return jobs.job_start(
        TRY,
        agent=agent,
        config=config,
        draft=draft,
        people=people,
        include_open=include_open,
        end_user_ids=[end_user.pk for end_user in trial.trial_candidates(agent, people)],
        created_by=user,
        as_of=now,
        created_at=now,
    )


def trial_cancel(*, job: TrialJob, now: datetime | None = None) -> TrialJob:
    """Ask a Try to stop: a queued one stops at once, a running one after the person it is on."""
    return jobs.job_cancel(job=job, now=now)


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


def _try_one(job: TrialJob, end_user_id: int, engine) -> trial.TrialResult:
    """Try one person (nobody, when they were erased meanwhile). Any failure ends the job."""
    end_user = EndUser.objects.filter(pk=end_user_id, agent_id=job.agent_id).first()
    try:
        return trial.trial_run(
            agent=job.agent,
            config=job.config,
            people=1,
            now=job.as_of,
            engine=engine,
            end_users=[end_user] if end_user else [],
            include_open=job.include_open,
        )
    except AppError as exc:  # the plan lost memory meanwhile, say
        raise jobs.JobFailed(exc.message) from exc
    except Exception as exc:
        log.exception("try job %s failed on end user %s", job.pk, end_user_id)
        raise jobs.JobFailed("Something went wrong on our side; nothing was saved. Try again.") from exc


def _record_one(job: TrialJob, position: int, end_user_id: int, result: trial.TrialResult) -> None:
    """The person's row (once per job, even when a task is delivered twice) and the progress."""
    with transaction.atomic():
        if result.people and EndUser.objects.filter(pk=end_user_id).exists():
            TrialJobPerson.objects.get_or_create(
                job_id=job.pk,
                end_user_id=end_user_id,
                defaults={"position": position, "result": _person_result(result.people[0])},
            )
        jobs.job_heartbeat(TrialJob, job.pk, done=Greatest(F("done"), Value(position + 1)))


def _try_people(job: TrialJob, budget: jobs.Budget, *, engine=None) -> str:
    """Try's step: the job's people in order, one at a time; a person already tried (a row exists)
    is skipped, so a task delivered twice or after a crash tries nobody twice."""
    engine = engine or get_engine()
    TrialJob.objects.filter(pk=job.pk).update(engine=engine.name[:40])
    tried = set(TrialJobPerson.objects.filter(job_id=job.pk).values_list("end_user_id", flat=True))
    for position, end_user_id in enumerate(job.end_user_ids):
        if end_user_id in tried:
            continue
        if not jobs.job_going_on(TrialJob, job.pk):
            return jobs.STOPPED
        _record_one(job, position, end_user_id, _try_one(job, end_user_id, engine))
        if budget.spent and position + 1 < len(job.end_user_ids):
            return jobs.CONTINUED
    return jobs.DONE


def trial_job_step(job_id: int, *, engine=None, budget_seconds: float = TASK_SECONDS, enqueue_next: bool = True) -> str:
    """Try the job's people for up to `budget_seconds`, then queue the next step (or finish)."""
    step = partial(_try_people, engine=engine)
    return jobs.job_step(
        TRY, job_id, step=step, budget_seconds=budget_seconds, enqueue_next=enqueue_next, related=["agent__team"]
    )


def trial_resume_stalled(now: datetime | None = None) -> int:
    """Queue again every Try whose step was lost (the people already tried are skipped)."""
    return jobs.job_resume_stalled(TRY, revive=jobs.never_revived, now=now)


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
