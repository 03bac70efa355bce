"""Teams, agents and their versioned configuration, end users and their conversations.

This is the lowest layer: it imports neither `consent` nor `memory`.
"""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q


class Plan(models.TextChoices):
    FREE = "free", "Free"
    PRO = "pro", "Pro"
    TEAM = "team", "Team"
    ENTERPRISE = "enterprise", "Enterprise"


# Memory comes with the Team plan and up (R3).
PLANS_WITH_MEMORY = frozenset({Plan.TEAM, Plan.ENTERPRISE})


class Team(models.Model):
    slug = models.SlugField(max_length=50, unique=True)
    name = models.CharField(max_length=120)
    plan = models.CharField(max_length=20, choices=Plan.choices, default=Plan.FREE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(plan__in=Plan.values), name="team_plan_valid"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def has_memory(self) -> bool:
        return self.plan in PLANS_WITH_MEMORY


class Membership(models.Model):
    class Role(models.TextChoices):
        """What each role may do is `agents.roles`."""

        OWNER = "owner", "Owner"
        ADMIN = "admin", "Admin"
        MEMBER = "member", "Member"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)
    active_keys: int  # set for the Team page (surfaces.web.team): the API keys its removal would revoke

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "user"], name="membership_unique"),
            models.CheckConstraint(condition=Q(role__in=["owner", "admin", "member"]), name="membership_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.team}"


class Invitation(models.Model):
    """A team owner's invitation to a teammate, by e-mail. The link carries a token; only its
    SHA-256 hash is stored. One use, and it expires."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.email} to {self.team}"


class ApiKey(models.Model):
    """A team's API key. Only a SHA-256 hash is stored; `prefix` is the visible start. A key acts
    with its maker's current role in the team (`agents.roles`); one made on the command line
    (no maker) acts as an admin. Removing the maker from the team revokes it."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=80)
    prefix = models.CharField(max_length=16)
    hashed_key = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class KeyGeneration(models.Model):
    """One row: a number bumped whenever any API key's standing changes (revoked, its maker's role
    changed or removed, its team deleted). Each process compares it with the number its cached keys
    were read under (`agents.services.api_key_authenticate`) when Redis is not there to share it."""

    number = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"key generation {self.number}"


def new_audit_public_id() -> str:
    return "aud_" + secrets.token_hex(8)


class AuditEvent(models.Model):
    """One team action on who holds access or team-wide data: who did it (a person, through the web
    or one of their API keys), what, when. Ids, labels and counts only; never a memory's words."""

    class Action(models.TextChoices):
        API_KEY_CREATED = "api_key.created", "created an API key"
        API_KEY_REVOKED = "api_key.revoked", "revoked an API key"
        MEMBER_INVITED = "member.invited", "invited someone"
        INVITATION_WITHDRAWN = "invitation.withdrawn", "withdrew an invitation"
        MEMBER_JOINED = "member.joined", "joined the team"
        MEMBER_REMOVED = "member.removed", "removed a member"
        ROLE_CHANGED = "member.role_changed", "changed a role"
        WEBHOOK_CREATED = "webhook.created", "added a webhook endpoint"
        WEBHOOK_UPDATED = "webhook.updated", "changed a webhook endpoint"
        WEBHOOK_DELETED = "webhook.deleted", "removed a webhook endpoint"
        AGENT_DELETED = "agent.deleted", "deleted an agent"
        END_USER_ERASED = "end_user.erased_team_wide", "erased a person on every agent"

    public_id = models.CharField(max_length=24, unique=True, default=new_audit_public_id, editable=False)
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="audit_events")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The actor as they were then (their e-mail, or "command line"): kept when the account goes.
    actor_label = models.CharField(max_length=254)
    api_key = models.ForeignKey(ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    action = models.CharField(max_length=40, choices=Action.choices)
    # What it was done to, as a label: "key ank_1a2b3c4d… (Production)", "bob@example.com", "whk_…".
    target = models.CharField(max_length=300, blank=True)
    detail = models.JSONField(default=dict, blank=True)  # e.g. {"from": "member", "to": "admin"}; never text
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["team", "-created_at", "-id"], name="auditevent_team_created")]

    def __str__(self) -> str:
        return f"{self.action} in team {self.team_id} at {self.created_at:%Y-%m-%d %H:%M}"


def new_agent_public_id() -> str:
    return "agt_" + secrets.token_hex(6)


def new_identity_secret() -> str:
    return secrets.token_urlsafe(32)


class Agent(models.Model):
    public_id = models.CharField(max_length=20, unique=True, default=new_agent_public_id, editable=False)
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="agents")
    name = models.CharField(max_length=120)
    # Signs website-chat visitor ids and checks `data-end-user-hash` (HMAC-SHA256 of the id).
    identity_secret = models.CharField(max_length=64, default=new_identity_secret)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the published version turned memory off; memories are deleted 30 days later (R4).
    memory_off_since = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


class AgentVersionQuerySet(models.QuerySet):
    def published(self, agent) -> "AgentVersion":
        """The agent's published version: its newest (R2). Every read of "the published version" is this one.
        Every agent has one from the moment it is created (`agent_create` publishes version 1)."""
        version = self.newest_of(agent).first()
        if version is None:
            raise AgentVersion.DoesNotExist(f"Agent {agent} has no published version.")
        return version

    def newest_of(self, agent) -> "AgentVersionQuerySet":
        """The published version as a one-row queryset; `agent` may be an `OuterRef`, for a subquery."""
        return self.filter(agent=agent).order_by("-number")[:1]


class AgentVersion(models.Model):
    """One published, numbered, immutable configuration of an agent (R2)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    config = models.JSONField()
    published_at = models.DateTimeField()
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # "web", "api", "builder", "restore", "seed"
    source = models.CharField(max_length=20, default="web")

    objects = AgentVersionQuerySet.as_manager()

    class Meta:
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "number"], name="agentversion_unique_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="agentversion_number_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.agent} v{self.number}"


class AgentDraft(models.Model):
    """The one open draft of an agent's configuration: changes that wait for Publish."""

    agent = models.OneToOneField(Agent, on_delete=models.CASCADE, related_name="draft")
    config = models.JSONField()
    based_on = models.PositiveIntegerField(help_text="The version number the draft started from.")
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"draft of agent {self.agent_id}"


class EndUser(models.Model):
    """A person an agent talks to, known by the integrator's id, scoped to the agent (R5, R24)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="end_users")
    external_id = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    last_chat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["agent", "external_id"], name="enduser_unique_per_agent"),
        ]
        indexes = [
            models.Index(fields=["agent", "last_chat_at"], name="enduser_agent_lastchat"),
            # GET /agents/{id}/end-users: newest first, keyset on (created_at, id).
            models.Index(fields=["agent", "-created_at", "-id"], name="enduser_agent_created"),
        ]

    def __str__(self) -> str:
        return self.external_id


def new_conversation_public_id() -> str:
    return "conv_" + secrets.token_hex(8)


class Conversation(models.Model):
    class MemoryOff(models.TextChoices):
        """Why memory is not used for a conversation; decided once, at start."""

        REQUESTED = "requested", "memory: false was asked for"
        SETTINGS = "settings", "memory is off in the agent's version"
        PLAN = "plan", "the team's plan has no memory"
        PROJECT = "project", "the agent works inside a project"
        STOPPED = "stopped", "the end user asked to stop"
        CONSENT = "consent", "ask first: no yes yet"
        SWITCH = "switch", "the visitor's switch is off"

    public_id = models.CharField(max_length=24, unique=True, default=new_conversation_public_id, editable=False)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="conversations")
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="conversations")
    version = models.ForeignKey(AgentVersion, on_delete=models.RESTRICT, related_name="conversations")
    uses_memory = models.BooleanField()
    memory_off_reason = models.CharField(max_length=20, choices=MemoryOff.choices, blank=True)
    # When the visitor's switch turned memory off during the chat (it used memory until then).
    memory_off_at = models.DateTimeField(null=True, blank=True)
    project = models.CharField(max_length=100, blank=True)
    source = models.CharField(max_length=20, default="api")
    # The note its agent reads (R17): built at start, then rewritten by memory.store.rows whenever the
    # memory changes, so a turn reads it with this row; empty when memory is not used.
    memory_note = models.TextField(blank=True)
    started_at = models.DateTimeField()
    last_activity_at = models.DateTimeField()
    # When the quiet window ends: set on each message of a conversation that uses memory,
    # cleared once the memory has read it. The sweep finds due work through this index.
    memory_due_at = models.DateTimeField(null=True, blank=True)
    # Read for the API's transcript (surfaces.api.lists.with_transcript), oldest first.
    transcript_messages: list["Message"]
    transcript_events: list["Message"]
    transcript_actions: list["ActionRun"]

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(uses_memory=True, memory_off_reason="") | Q(uses_memory=False),
                name="conversation_memory_reason_consistent",
            ),
            models.CheckConstraint(
                condition=Q(memory_due_at__isnull=True) | Q(uses_memory=True),
                name="conversation_due_only_with_memory",
            ),
        ]
        indexes = [
            models.Index(
                fields=["memory_due_at"],
                name="conversation_memory_due",
                condition=Q(memory_due_at__isnull=False),
            ),
            models.Index(fields=["end_user", "started_at"], name="conversation_enduser_started"),
        ]

    def __str__(self) -> str:
        return self.public_id


class Message(models.Model):
    class Kind(models.TextChoices):
        USER = "user", "The person"
        AGENT = "agent", "The agent"
        TOOL_RESULT = "tool_result", "Tool result"
        FILE = "file", "File"
        WEB_PAGE = "web_page", "Web page"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    text = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["user", "agent", "tool_result", "file", "web_page"]), name="message_kind_valid"
            )
        ]
        indexes = [models.Index(fields=["conversation", "created_at"], name="message_conv_created")]

    def __str__(self) -> str:
        return f"{self.kind} message {self.pk} in conversation {self.conversation_id}"  # never its words


class ActionRun(models.Model):
    class Status(models.TextChoices):
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="action_runs")
    name = models.CharField(max_length=80)
    status = models.CharField(max_length=20, choices=Status.choices)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=["succeeded", "failed"]), name="actionrun_status_valid")
        ]
        indexes = [models.Index(fields=["conversation", "created_at"], name="actionrun_conv_created")]

    def __str__(self) -> str:
        return f"{self.name} ({self.status}) in conversation {self.conversation_id}"


class UsageDay(models.Model):
    """What a team used on a day. Chat replies count; memory runs never do (R3)."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="usage_days")
    day = models.DateField()
    replies = models.PositiveIntegerField(default=0)
    tokens = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "day"], name="usageday_unique")]

    def __str__(self) -> str:
        return f"usage of team {self.team_id} on {self.day}"
