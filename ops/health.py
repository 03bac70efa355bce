"""Is the background work moving? Four signs, each the age of the oldest thing waiting:

- the oldest end user whose quiet window has ended and who has not been swept (the schedule or
  the sweep task is not running);
- the oldest task waiting in the broker's queue (no worker takes tasks: the issue's dead worker);
- the active Apply, and the active Try, whose last sign of life is oldest (its step task was lost
  or hangs): both are jobs of `memory.tools.jobs`, measured and resumed the same way.

Any one older than the stall threshold (settings.MEMORY_HEALTH_STALL_SECONDS) makes the work
unhealthy: `manage.py memory_health` exits 1 and /healthz/tasks answers 503. Ages and flags
only: no id, name or text of anyone.
"""

import logging
from dataclasses import asdict, dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import Min
from django.utils import timezone

log = logging.getLogger(__name__)


@dataclass
class Check:
    name: str
    waiting: int  # how many are waiting (0 or more)
    oldest_seconds: float  # age of the oldest waiting one; 0 when none waits
    ok: bool
    error: str = ""  # a code, never a message from a library (which could hold a URL with a password)


def stall_seconds() -> int:
    return int(getattr(settings, "MEMORY_HEALTH_STALL_SECONDS", 300))


def _age(now: datetime, then: datetime | None) -> float:
    return max(0.0, (now - then).total_seconds()) if then else 0.0


def due_backlog(now: datetime) -> tuple[int, datetime | None]:
    """How many conversations wait for their quiet-window run, and since when the oldest does."""
    from agents.models import Conversation

    due = Conversation.objects.filter(memory_due_at__lte=now)
    row = due.aggregate(oldest=Min("memory_due_at"))
    return (due.count() if row["oldest"] else 0), row["oldest"]


def queue_backlog(now: datetime) -> tuple[int, datetime | None]:
    """How many tasks wait in the broker (not yet taken by a cluster), and when the oldest was
    queued (django-q stamps each task package with `started` when it is queued)."""
    from django_q.brokers import get_broker
    from django_q.signing import SignedPackage

    broker = get_broker()
    size = broker.queue_size() or 0
    if not size:
        return 0, None
    oldest = None
    if broker.__class__.__name__ == "Redis":
        package = broker.connection.lindex(broker.list_key, 0)  # rpush / blpop: the head is the oldest
        if package is not None:
            oldest = SignedPackage.loads(package).get("started")
    else:  # the ORM broker: rows not locked by a cluster, oldest first
        row = broker.get_connection().filter(key=broker.list_key, lock__lte=now).order_by("id").first()
        if row is not None:
            oldest = row.task.get("started")  # a property: the unsigned package
    return size, oldest


def apply_backlog(now: datetime) -> tuple[int, datetime | None]:
    """Active Apply jobs, and the oldest of their last signs of life."""
    from memory.models import ApplyJob
    from memory.tools.jobs import job_backlog

    return job_backlog(ApplyJob)


def try_backlog(now: datetime) -> tuple[int, datetime | None]:
    """Active Try jobs, and the oldest of their last signs of life."""
    from memory.models import TrialJob
    from memory.tools.jobs import job_backlog

    return job_backlog(TrialJob)


def task_health(*, now: datetime | None = None, threshold: int | None = None) -> dict:
    """The four checks and the verdict: {"ok", "stall_seconds", "checks": [Check as dict]}."""
    now = now or timezone.now()
    threshold = stall_seconds() if threshold is None else threshold
    checks = []
    for name, measure in (
        ("due", due_backlog),
        ("queue", queue_backlog),
        ("apply", apply_backlog),
        ("try", try_backlog),
    ):
        try:
            waiting, oldest = measure(now)
        except Exception as exc:  # the broker or the database does not answer: that is unhealthy too
            log.warning("health check %s could not measure", name, exc_info=True)
            checks.append(Check(name, 0, 0.0, False, error=type(exc).__name__))
            continue
        age = _age(now, oldest)
        checks.append(Check(name, waiting, round(age, 1), age <= threshold))
    return {"ok": all(c.ok for c in checks), "stall_seconds": threshold, "checks": [asdict(c) for c in checks]}


def resume_stalled_applies(now: datetime | None = None) -> int:
    """Queue again, from its cursor, every active Apply with no heartbeat for jobs.STALLED_AFTER
    (its step task was lost with a killed cluster). Returns how many."""
    from memory.tools.apply import apply_resume_stalled

    return apply_resume_stalled(now)


def resume_stalled_tries(now: datetime | None = None) -> int:
    """The same for Try: its people already tried are skipped. Returns how many."""
    from memory.tools.trial_jobs import trial_resume_stalled

    return trial_resume_stalled(now)
