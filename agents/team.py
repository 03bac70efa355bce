"""The team: a team owner invites a teammate by e-mail (a one-use link with a token, only its hash
stored), sees the members and removes one. Mail goes through Django's EMAIL_BACKEND, which the
environment sets (the console by default)."""

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

from .errors import AppError
from .models import Invitation, Membership, Team

INVITATION_DAYS = 7
User = get_user_model()


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def is_owner(team: Team, user) -> bool:
    return Membership.objects.filter(team=team, user=user, role=Membership.Role.OWNER).exists()


def _owner_or_refuse(team: Team, user) -> None:
    if not is_owner(team, user):
        raise AppError("owner_only", "Only a team owner can invite or remove members.", status=403)


def invitation_create(*, team: Team, email: str, invited_by, link_for, now=None) -> Invitation:
    """Invite `email` to `team` and send the link. `link_for(token)` makes the absolute address.
    Refuses a non-owner, a bad address, and someone already in the team."""
    _owner_or_refuse(team, invited_by)
    email = (email or "").strip().lower()
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
            invited_by=invited_by,
            created_at=now,
            expires_at=now + timedelta(days=INVITATION_DAYS),
        )
    inviter = invited_by.email or invited_by.username
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
        Membership.objects.get_or_create(team=invitation.team, user=user, defaults={"role": Membership.Role.MEMBER})
        invitation.accepted_at, invitation.accepted_by = now, user
        invitation.save(update_fields=["accepted_at", "accepted_by"])
    return user


def invitation_revoke(*, invitation: Invitation, user, now=None) -> None:
    _owner_or_refuse(invitation.team, user)
    Invitation.objects.filter(pk=invitation.pk, accepted_at__isnull=True).update(revoked_at=now or timezone.now())


def member_remove(*, team: Team, membership: Membership, user) -> None:
    """An owner removes a member. The last owner cannot be removed (the team would have none)."""
    _owner_or_refuse(team, user)
    with transaction.atomic():
        owners = Membership.objects.select_for_update().filter(team=team, role=Membership.Role.OWNER)
        if membership.role == Membership.Role.OWNER and owners.count() <= 1:
            raise AppError("last_owner", "A team keeps at least one owner: make someone else owner first.")
        membership.delete()


def members(team: Team) -> list[Membership]:
    return list(Membership.objects.filter(team=team).select_related("user").order_by("-role", "user__email"))


def open_invitations(team: Team, *, now=None) -> list[Invitation]:
    now = now or timezone.now()
    return list(
        Invitation.objects.filter(team=team, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now)
        .select_related("invited_by")
        .order_by("-created_at")
    )
