"""The team: an owner or admin invites a teammate by e-mail (a one-use link with a token, only its
hash stored), changes a member's role and removes one (their sessions and the keys they made go
with them). Who may do which is `agents.roles`; each action goes in the team's audit log. Mail goes
through Django's EMAIL_BACKEND, which the environment sets (the console by default)."""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from agents import access, roles
from agents.errors import AppError
from agents.models import AuditEvent, Invitation, Membership, Team
from agents.services import api_keys_revoke_made_by

INVITATION_DAYS = 7
MAX_EMAIL_CHARS = 254  # RFC 5321's limit on an address, and the column's size
User = get_user_model()


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invitation_create(*, team: Team, email: str, actor: access.Actor, link_for, now=None) -> Invitation:
    """Invite `email` to `team` and send the link. `link_for(token)` makes the absolute address.
    Refuses someone who is not an owner or admin, a bad or over-long address, and someone already in
    the team."""
    access.require(actor, "members")
    email = (email or "").strip().lower()
    if len(email) > MAX_EMAIL_CHARS:
        raise AppError("invalid_email", f"An e-mail address is at most {MAX_EMAIL_CHARS} characters.", field="email")
    try:
        validate_email(email)
    except ValidationError:
        raise AppError(
            "invalid_email", "Give the teammate's e-mail address, like priya@example.com.", field="email"
        ) from None
    if Membership.objects.filter(team=team, user__email__iexact=email).exists():
        raise AppError("already_member", f"{email} is already in {team.name}.", field="email")
    now = now or timezone.now()
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        # A new invitation replaces an earlier open one to the same address.
        Invitation.objects.filter(team=team, email=email, accepted_at__isnull=True, revoked_at__isnull=True).update(
            revoked_at=now
        )
        invitation = Invitation.objects.create(
            team=team,
            email=email,
            token_hash=_hash(token),
            invited_by=actor.user,
            created_at=now,
            expires_at=now + timedelta(days=INVITATION_DAYS),
        )
        access.audit_record(team=team, actor=actor, action=AuditEvent.Action.MEMBER_INVITED, target=email, now=now)
    inviter = actor.label
    send_mail(
        subject=f"Join {team.name} on AgentNava",
        message=(
            f"{inviter} invited you to the team {team.name} on AgentNava.\n\n"
            f"Open this link to join (it works once, for {INVITATION_DAYS} days):\n{link_for(token)}\n\n"
            "If you did not expect this, ignore this e-mail."
        ),
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[email],
    )
    return invitation


def invitation_for_token(token: str, *, now=None) -> Invitation | None:
    """The open invitation this token belongs to, or None (unknown, used, revoked or expired)."""
    now = now or timezone.now()
    return (
        Invitation.objects.select_related("team")
        .filter(token_hash=_hash(token or ""), accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now)
        .first()
    )


def invitation_accept(*, token: str, user=None, password: str = "", now=None):
    """Join the team. A signed-in user joins as themselves; someone new sets a password and gets an
    account under the invited address. Returns the user. Refuses a used or expired link."""
    now = now or timezone.now()
    with transaction.atomic():
        invitation = invitation_for_token(token, now=now)
        if invitation is None:
            raise AppError(
                "invitation_invalid",
                "This invitation link does not work: it was used, withdrawn or is too old. Ask for a new one.",
                status=404,
            )
        invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
        if user is None or not user.is_authenticated:
            if User.objects.filter(email__iexact=invitation.email).exists():
                raise AppError(
                    "sign_in_first", "You already have an account: sign in, then open the link again.", status=409
                )
            if len(password) < 10:
                raise AppError("weak_password", "Choose a password of at least 10 characters.", field="password")
            user = User.objects.create_user(username=invitation.email, email=invitation.email, password=password)
        _, joined = Membership.objects.get_or_create(
            team=invitation.team, user=user, defaults={"role": Membership.Role.MEMBER}
        )
        invitation.accepted_at, invitation.accepted_by = now, user
        invitation.save(update_fields=["accepted_at", "accepted_by"])
        if joined:
            access.audit_record(
                team=invitation.team,
                actor=access.Actor(role=roles.MEMBER, user=user),
                action=AuditEvent.Action.MEMBER_JOINED,
                target=invitation.email,
                now=now,
            )
    return user


def invitation_revoke(*, invitation: Invitation, actor: access.Actor, now=None) -> None:
    access.require(actor, "members")
    with transaction.atomic():
        if Invitation.objects.filter(pk=invitation.pk, accepted_at__isnull=True, revoked_at__isnull=True).update(
            revoked_at=now or timezone.now()
        ):
            access.audit_record(
                team=invitation.team,
                actor=actor,
                action=AuditEvent.Action.INVITATION_WITHDRAWN,
                target=invitation.email,
            )


def _member_label(membership: Membership) -> str:
    return membership.user.email or membership.user.username


def _refuse_unless_may_assign(actor: access.Actor, *, old_role: str, new_role: str | None) -> None:
    access.require(actor, "members")
    if not roles.may_assign(actor.role, old_role=old_role, new_role=new_role or roles.MEMBER):
        access.require(actor, "owners")


def _keep_an_owner(team: Team, membership: Membership) -> None:
    """Refuse to leave the team without an owner (the rows are locked: two owners leaving at once
    cannot both pass)."""
    owners = list(Membership.objects.select_for_update().filter(team=team, role=Membership.Role.OWNER))
    if membership.role == Membership.Role.OWNER and len(owners) <= 1:
        raise AppError("last_owner", "A team keeps at least one owner: make someone else owner first.", status=409)


def member_role_change(*, team: Team, membership: Membership, role: str, actor: access.Actor) -> Membership:
    """Give a member another role. Owners and admins move members and admins; only an owner makes or
    unmakes an owner, and the last owner stays one. Their API keys act with the new role on every
    server within a second (the key generation). Refuses an unknown role."""
    if role not in roles.ROLES:
        raise AppError("invalid_role", f"A role is one of: {', '.join(roles.ROLES)}.", field="role")
    _refuse_unless_may_assign(actor, old_role=membership.role, new_role=role)
    with transaction.atomic():
        old = membership.role
        if old == role:
            return membership
        if role != Membership.Role.OWNER:
            _keep_an_owner(team, membership)
        membership.role = role
        membership.save(update_fields=["role"])  # the key generation moves (agents.receivers)
        access.audit_record(
            team=team,
            actor=actor,
            action=AuditEvent.Action.ROLE_CHANGED,
            target=_member_label(membership),
            detail={"from": old, "to": role},
        )
    return membership


def member_remove(*, team: Team, membership: Membership, actor: access.Actor) -> dict:
    """Remove a member: their membership, every API key they made in this team (revoked), and every
    session they have (signed out on every device). The last owner cannot be removed, and only an
    owner removes an owner. Answers what went: {"keys": n, "sessions": n}."""
    _refuse_unless_may_assign(actor, old_role=membership.role, new_role=None)
    with transaction.atomic():
        _keep_an_owner(team, membership)
        user = membership.user
        membership.delete()
        keys = api_keys_revoke_made_by(team=team, user=user)
        sessions = sessions_end(user=user)
        access.audit_record(
            team=team,
            actor=actor,
            action=AuditEvent.Action.MEMBER_REMOVED,
            target=_member_label(membership),
            detail={"keysRevoked": keys, "sessionsEnded": sessions},
        )
    return {"keys": keys, "sessions": sessions}


def sessions_end(*, user) -> int:
    """End every session of `user` (database sessions: Django keeps no index by user, so the live
    ones are read and decoded). How many."""
    from django.contrib.sessions.models import Session

    ended = [
        session.pk
        for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator()
        if str(session.get_decoded().get("_auth_user_id")) == str(user.pk)
    ]
    Session.objects.filter(pk__in=ended).delete()
    return len(ended)


def keys_made_by(team: Team, user) -> int:
    """How many active keys of the team `user` made: what their removal revokes."""
    return team.api_keys.filter(created_by=user, revoked_at__isnull=True).count()


def members(team: Team) -> list[Membership]:
    """Owners first, then admins, then members, each by address."""
    order = {role: n for n, role in enumerate(roles.ROLES)}
    rows = Membership.objects.filter(team=team).select_related("user")
    return sorted(rows, key=lambda m: (order.get(m.role, len(order)), m.user.email))


def open_invitations(team: Team, *, now=None) -> list[Invitation]:
    now = now or timezone.now()
    return list(
        Invitation.objects.filter(team=team, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now)
        .select_related("invited_by")
        .order_by("-created_at")
    )
