"""Try on past conversations as a background job (R18): the job (who started it, on which settings,
how far it is) and one row per person tried, holding what the page shows for them.

A person's row belongs to their end user (deleted with them by an erase) and to the job; the job
keeps counts only. Only the newest few jobs of an agent are kept (`memory.trial_jobs.KEEP_JOBS`)."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from agents.models import Agent, EndUser


class TrialJob(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        CANCELLED = "cancelled", "Cancelled"
        FAILED = "failed", "Failed"

    ACTIVE = ("queued", "running")

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="trial_jobs")
    # The settings tried (the draft when there is one), as they were when Try was pressed.
    config = models.JSONField()
    draft = models.BooleanField(default=False)
    people = models.PositiveSmallIntegerField()
    include_open = models.BooleanField(default=False, help_text="Also read chats still inside their quiet window.")
    # The end users to try, picked when it started (newest first); `done` of them are finished.
    end_user_ids = models.JSONField(default=list)
    done = models.PositiveSmallIntegerField(default=0)
    engine = models.CharField(max_length=40, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    cancel_requested = models.BooleanField(default=False)
    error = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # "Now" for every person of the job: chats up to here, the quiet window measured from here.
    as_of = models.DateTimeField()
    created_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "cancelled", "failed"]),
                name="trialjob_status_valid",
            ),
            # One Try at a time per agent.
            models.UniqueConstraint(
                fields=["agent"], condition=Q(status__in=["queued", "running"]), name="trialjob_one_active_per_agent"
            ),
        ]

    def __str__(self) -> str:
        return f"try {self.pk} on {self.agent_id} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    @property
    def total(self) -> int:
        return len(self.end_user_ids)

    @property
    def percent(self) -> int:
        if not self.total:
            return 0 if self.is_active else 100
        return min(100, self.done * 100 // self.total)


class TrialJobPerson(models.Model):
    """What Try made of one person: today's lines beside the tried settings' (rows), the counts,
    what was read. Deleted with the end user."""

    job = models.ForeignKey(TrialJob, on_delete=models.CASCADE, related_name="persons")
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField()
    result = models.JSONField()

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["job", "end_user"], name="trialjobperson_once_per_job")]

    def __str__(self) -> str:
        return f"person {self.pk} of Try job {self.job_id}"
