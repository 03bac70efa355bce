"""The memory about one end user on one agent, and an audit row per run that changed or read it."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from agents.models import Agent, EndUser


class Memory(models.Model):
    """One per (agent, end user) (R5). Plain text, one fact per line, at most 30 lines (R6).

    A deleted memory keeps this row with empty text and `read_up_to` at the deletion time, so
    no older chat can bring a line back (R20). It is "absent" to readers while empty and not
    stopped."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="memories")
    end_user = models.OneToOneField(EndUser, on_delete=models.CASCADE, related_name="memory")
    text = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField()
    # How far the memory has read their chats; nothing older can change it (R15).
    read_up_to = models.DateTimeField(null=True, blank=True)
    # {at, added, replaced, removed}: counts, none of their words.
    last_run = models.JSONField(null=True, blank=True)
    stopped_at = models.DateTimeField(null=True, blank=True)
    # Where this memory's current life began: the last stop, resume, delete, expiry or forget.
    # Survives retention (which empties the text, never the row). (Try reads from read_up_to.)
    horizon_at = models.DateTimeField(null=True, blank=True)
    # A "forget" not yet read past: {"before": iso, "subjects": [...], "lines": [...]}. The writer
    # reads the chats before `before` with these excluded, then clears it (never kept longer).
    forget_pending = models.JSONField(null=True, blank=True)
    # The last quiet-window failure after its retries: {at, code, attempts}; cleared on success.
    last_failure = models.JSONField(null=True, blank=True)
    # The R21 fields kept beside the text, so a page of memories reads this table alone (one keyset
    # scan, no join or subquery a row): the end user's id (never changes), their newest chat
    # (`EndUser.last_chat_at`), their yes (`Consent.agreed_at`) and how many of their chats hold a
    # message. Counted when the row is made and kept by what changes them, in the same transaction
    # (memory.store.counters); tests/memory/test_counters_property.py checks them against a recount.
    external_id = models.CharField(max_length=200, blank=True)
    last_chat_at = models.DateTimeField(null=True, blank=True)
    agreed_at = models.DateTimeField(null=True, blank=True)
    conversations = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name_plural = "memories"
        constraints = [
            models.UniqueConstraint(fields=["agent", "end_user"], name="memory_unique_per_end_user"),
            models.CheckConstraint(condition=Q(stopped_at__isnull=True) | Q(text=""), name="memory_stopped_is_empty"),
            # `before` pages exactly: no two memories of an agent share an updatedAt (a write that
            # would tie moves on by a microsecond, see memory.store.rows.save_unique).
            models.UniqueConstraint(fields=["agent", "updated_at"], name="memory_updated_unique_per_agent"),
        ]
        indexes = [
            # Newest change first, keyset-paged on (updated_at, id).
            models.Index(fields=["agent", "-updated_at", "-id"], name="memory_agent_updated"),
            # The page of present memories (memory.store.selectors.memories_page): only the rows it
            # shows, in its order, so a page is one index range scan that stops after limit + 1 rows.
            models.Index(
                fields=["agent", "-updated_at", "-id"],
                name="memory_agent_present",
                condition=~Q(text="") | Q(stopped_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"memory of {self.end_user_id} on {self.agent_id}"

    @property
    def lines(self) -> list[str]:
        return [line for line in self.text.split("\n") if line.strip()]

    @property
    def is_present(self) -> bool:
        return bool(self.text) or self.stopped_at is not None


class MemoryRun(models.Model):
    """An audit row per run. Counts and timings only: never a copy of the memory's words."""

    class Kind(models.TextChoices):
        QUIET = "quiet", "Quiet window"
        TRY = "try", "Try"
        APPLY = "apply", "Apply"
        TEAM_EDIT = "team_edit", "Team edit"
        API_SET = "api_set", "API"
        END_USER_REQUEST = "end_user_request", "End user's request"
        RETENTION = "retention", "Retention"

    class Status(models.TextChoices):
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="runs")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    engine = models.CharField(max_length=20, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices)
    added = models.PositiveIntegerField(default=0)
    replaced = models.PositiveIntegerField(default=0)
    removed = models.PositiveIntegerField(default=0)
    # {reason code: count}; the dropped lines' words are never stored.
    dropped = models.JSONField(default=dict, blank=True)
    dropped_labels: list[tuple[str, int]]  # set for the memory's page (memory.store.people): counts by label
    messages_read = models.PositiveIntegerField(default=0)
    actions_read = models.PositiveIntegerField(default=0)
    read_from = models.DateTimeField(null=True, blank=True)
    read_to = models.DateTimeField(null=True, blank=True)
    error = models.CharField(max_length=200, blank=True)
    attempt = models.PositiveSmallIntegerField(default=1)
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    kind__in=["quiet", "try", "apply", "team_edit", "api_set", "end_user_request", "retention"]
                ),
                name="memoryrun_kind_valid",
            ),
            models.CheckConstraint(condition=Q(status__in=["succeeded", "failed"]), name="memoryrun_status_valid"),
        ]
        indexes = [
            models.Index(fields=["memory", "-started_at"], name="memoryrun_memory_started"),
            models.Index(fields=["started_at"], name="memoryrun_started"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} run {self.pk} ({self.status}) of memory {self.memory_id}"  # counts only


def _job_status(failed_label: str) -> models.CharField:
    """A job's status column; only the label of "failed" differs between the kinds."""
    choices = [(value, failed_label if value == "failed" else label) for value, label in Job.Status.choices]
    return models.CharField(max_length=20, choices=choices, default=Job.Status.QUEUED)


class Job(models.Model):
    """A long piece of team work run by django-q in steps (Try, Apply): who started it, where it
    is, and its signs of life. `memory.tools.jobs` owns the life cycle (start, step, cancel,
    heartbeat, the stalled check, resume); a kind adds its own progress and payload.

    One active job per agent and kind, enforced by the database (`<kind>_one_active_per_agent`).
    The subclass declares the agent (its related name is part of the API of `Agent`)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        CANCELLED = "cancelled", "Cancelled"
        FAILED = "failed", "Failed"

    ACTIVE = ("queued", "running")

    agent: models.ForeignKey  # declared by each kind, with its own related name
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    cancel_requested = models.BooleanField(default=False)
    error = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "cancelled", "failed"]),
                name="%(class)s_status_valid",
            ),
            # One job of a kind at a time per agent.
            models.UniqueConstraint(
                fields=["agent"], condition=Q(status__in=["queued", "running"]), name="%(class)s_one_active_per_agent"
            ),
        ]

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    @property
    def last_sign_of_life(self):
        return self.heartbeat_at or self.started_at or self.created_at


class ApplyJob(Job):
    """One "Apply to what is already kept" (R19): a background review of every memory of an agent
    against one published version. Resumable: `cursor` is the id of the last memory it finished,
    moved in the same transaction as that memory's change, so a crash loses nothing and repeats
    nothing. Counts only; never a word of any memory."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="apply_jobs")
    version = models.ForeignKey("agents.AgentVersion", on_delete=models.RESTRICT, related_name="+")
    status = _job_status("Stopped after errors")
    # The memories this job covers: ids up to `last_memory_id` as they were when it started.
    last_memory_id = models.BigIntegerField(default=0)
    cursor = models.BigIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    reviewed = models.PositiveIntegerField(default=0)
    changed = models.PositiveIntegerField(default=0)
    replaced = models.PositiveIntegerField(default=0)
    removed = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    # Memories whose review failed (engine error): reviewed again, first, on Resume.
    failed_ids = models.JSONField(default=list, blank=True)
    # Failed memories queued for review again by Resume (taken before the cursor goes on).
    retry_ids = models.JSONField(default=list, blank=True)
    # {reason code: count} of operations the guards dropped (an added line is "added_in_review").
    dropped = models.JSONField(default=dict, blank=True)

    class Meta(Job.Meta):
        indexes = [models.Index(fields=["agent", "-created_at"], name="applyjob_agent_created")]

    def __str__(self) -> str:
        return f"apply {self.pk} on {self.agent_id} ({self.status})"

    @property
    def processed(self) -> int:
        return self.reviewed + self.failed

    @property
    def unreviewed(self) -> int:
        """Memories of the job left unreviewed: those whose review failed (Resume reviews them
        again) and, unless it finished, those it has not reached."""
        if self.status == self.Status.DONE:
            return self.failed + len(self.retry_ids)
        return self.failed + max(0, self.total - self.processed)

    @property
    def percent(self) -> int:
        if not self.total:
            return 100 if not self.is_active else 0
        return min(100, self.processed * 100 // self.total)


# Try on past conversations as a background job (R18): the job (who started it, on which settings,
# how far it is) and one row per person tried, holding what the page shows for them.
#
# A person's row belongs to their end user (deleted with them by an erase) and to the job; the job
# keeps counts only. Only the newest few jobs of an agent are kept (`memory.tools.trial_jobs.KEEP_JOBS`).
class TrialJob(Job):
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
    # "Now" for every person of the job: chats up to here, the quiet window measured from here.
    as_of = models.DateTimeField()

    class Meta(Job.Meta):
        pass

    def __str__(self) -> str:
        return f"try {self.pk} on {self.agent_id} ({self.status})"

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
