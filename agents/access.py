"""Who holds access to a team: the role of the person (or the API key) asking, the one refusal
for an operation their role does not allow, and the audit log of team actions.

The table of who may do what is `agents.roles`; this module looks the role up and answers. Every
page and API class that changes access, or removes data team-wide, calls `require` before its
service (never a template alone), and the service records what was done with `audit_record`."""

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from agents import roles
from agents.errors import AppError
from agents.models import ApiKey, AuditEvent, Membership, Team

COMMAND_LINE = "command line"


@dataclass(frozen=True)
class Actor:
    """Who asks: a person (signed in, or through one of their API keys), with their role in the
    team; or a key made on the command line (no person), which acts as an admin."""

    role: str | None
    user: Any = None
    api_key: ApiKey | None = None

    @property
    def label(self) -> str:
        if self.user is not None:
            return self.user.email or self.user.username
        return COMMAND_LINE


def role_of(team: Team, user) -> str | None:
    """The user's role in the team, or None when they are not in it."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return Membership.objects.filter(team=team, user=user).values_list("role", flat=True).first()


def actor_for_user(team: Team, user) -> Actor:
    return Actor(role=role_of(team, user), user=user)


def actor_for_key(key: ApiKey) -> Actor:
    """The key's actor: its maker with the role they hold now (`key.maker_role`, read with the key by
    `services.api_key_authenticate`), or an admin for a key made on the command line."""
    role = getattr(key, "maker_role", None)
    if key.created_by_id is None:
        role = roles.ADMIN
    return Actor(role=role, user=key.created_by if key.created_by_id else None, api_key=key)


def require(actor: Actor, permission: str) -> None:
    """Refuse (403, `admin_only` or `owner_only`) unless the actor's role has the permission."""
    try:
        roles.require(actor.role, permission)
    except roles.RoleRefused as refused:
        raise AppError(refused.code, refused.message, status=403) from None


def audit_record(*, team: Team, actor: Actor | None, action: str, target: str = "", detail=None, now=None):
    """Record one team action. `target` and `detail` hold labels, ids and counts, never text a
    person or a model wrote about an end user."""
    actor = actor or Actor(role=None)
    return AuditEvent.objects.create(
        team=team,
        actor=actor.user,
        actor_label=actor.label[:254],
        api_key=actor.api_key,
        action=action,
        target=target[:300],
        detail=detail or {},
        created_at=now or timezone.now(),
    )


def audit_events(team: Team) -> QuerySet:
    """The team's audit log, for a keyset page newest first (`surfaces.http.pagination.keyset_page`)."""
    return AuditEvent.objects.filter(team=team).select_related("api_key")


def key_label(key: ApiKey) -> str:
    return f"key {key.prefix}… ({key.name})"
