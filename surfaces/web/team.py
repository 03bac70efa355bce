"""The Team page (members, roles and invitations), the audit log page and the invitation link.
Thin: each view checks who asks (`agents.access`; a refusal is the 403 page) and calls `agents.team`."""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import ValidationError

from agents import access, roles
from agents import team as team_services
from agents.errors import AppError
from agents.models import ApiKey, Invitation, Membership
from surfaces.http.pagination import cursor_decode, keyset_page
from surfaces.web.build import _team_or_404, require_web
from surfaces.web.forms import InvitationAcceptForm, InviteForm, RoleForm, cleaned

AUDIT_ON_TEAM_PAGE = 10
AUDIT_PAGE_SIZE = 50


def _members_with_keys(team) -> list[Membership]:
    """The members, each with `active_keys`: the keys their removal would revoke (two queries)."""
    counts = dict(
        ApiKey.objects.filter(team=team, revoked_at=None, created_by__isnull=False)
        .values("created_by")
        .annotate(n=Count("id"))
        .values_list("created_by", "n")
    )
    rows = team_services.members(team)
    for membership in rows:
        membership.active_keys = counts.get(membership.user_id, 0)
    return rows


@login_required
def team_page(request):
    team = _team_or_404(request)
    actor = access.actor_for_user(team, request.user)
    manager = roles.allows(actor.role, "members")
    error, typed, status = None, "", 200
    if request.method == "POST":
        require_web(actor, "members")
        typed = cleaned(InviteForm(request.POST))["email"]
        try:
            invitation = team_services.invitation_create(
                team=team,
                email=typed,
                actor=actor,
                link_for=lambda token: request.build_absolute_uri(reverse("agents:invitation", args=[token])),
            )
            messages.success(
                request,
                f"Invitation sent to {invitation.email}. The link works once, for {team_services.INVITATION_DAYS} days.",
            )
            return redirect("agents:team")
        except AppError as exc:
            error, status = exc.message, exc.status
    ctx = {
        "team": team,
        "role": actor.role,
        "manager": manager,
        "is_owner": actor.role == roles.OWNER,
        "roles": [(role, roles.ROLE_LABELS[role]) for role in roles.ROLES],
        "members": _members_with_keys(team),
        "invitations": team_services.open_invitations(team) if manager else [],
        "audit": list(access.audit_events(team).order_by("-created_at", "-id")[:AUDIT_ON_TEAM_PAGE])
        if roles.allows(actor.role, "audit_log")
        else None,
        "invite_error": error,
        "typed_email": typed[: team_services.MAX_EMAIL_CHARS + 1],
        "email_max": team_services.MAX_EMAIL_CHARS,
    }
    return render(request, "agents/team.html", ctx, status=status)


def _membership(request, membership_id):
    team = _team_or_404(request)
    membership = Membership.objects.filter(team=team, pk=membership_id).select_related("user").first()
    if membership is None:
        raise Http404("No such member.")
    actor = access.actor_for_user(team, request.user)
    require_web(actor, "members")
    return team, membership, actor


@login_required
@require_POST
def member_remove(request, membership_id):
    team, membership, actor = _membership(request, membership_id)
    try:
        gone = team_services.member_remove(team=team, membership=membership, actor=actor)
        messages.success(
            request,
            f"{membership.user.email or membership.user.username} was removed from {team.name}: signed out "
            f"everywhere, and {gone['keys']} API key{'' if gone['keys'] == 1 else 's'} they made revoked.",
        )
    except AppError as exc:
        if exc.status == 403:
            require_web(actor, "owners")
        messages.error(request, exc.message)
    return redirect("agents:team")


@login_required
@require_POST
def member_role(request, membership_id):
    team, membership, actor = _membership(request, membership_id)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.errors["role"][0])
        return redirect("agents:team")
    try:
        team_services.member_role_change(team=team, membership=membership, role=form.cleaned_data["role"], actor=actor)
        messages.success(
            request, f"{membership.user.email or membership.user.username} is now {membership.get_role_display()}."
        )
    except AppError as exc:
        if exc.status == 403:
            require_web(actor, "owners")
        messages.error(request, exc.message)
    return redirect("agents:team")


@login_required
@require_POST
def invitation_revoke(request, invitation_id):
    team = _team_or_404(request)
    invitation = Invitation.objects.filter(team=team, pk=invitation_id).first()
    if invitation is None:
        raise Http404("No such invitation.")
    actor = access.actor_for_user(team, request.user)
    require_web(actor, "members")
    team_services.invitation_revoke(invitation=invitation, actor=actor)
    messages.info(request, f"The invitation to {invitation.email} was withdrawn: its link no longer works.")
    return redirect("agents:team")


@login_required
def audit_log(request):
    """The team's audit log, newest first, a page at a time (?cursor= from the previous page)."""
    team = _team_or_404(request)
    require_web(access.actor_for_user(team, request.user), "audit_log")
    query = {"limit": AUDIT_PAGE_SIZE}
    cursor = request.GET.get("cursor", "")
    if cursor:
        try:
            cursor_decode(cursor)
        except ValidationError:
            return render(request, "agents/audit.html", {"team": team, "events": [], "bad_cursor": True}, status=400)
        query["cursor"] = cursor
    events, next_query = keyset_page(access.audit_events(team), field="created_at", query=query)
    return render(request, "agents/audit.html", {"team": team, "events": events, "next": next_query})


def invitation(request, token):
    """The link in the e-mail: join as the signed-in user, or set a password for a new account."""
    found = team_services.invitation_for_token(token)
    error = None
    if request.method == "POST" and found is not None:
        password = cleaned(InvitationAcceptForm(request.POST))["password"]
        try:
            user = team_services.invitation_accept(token=token, user=request.user, password=password)
            if not request.user.is_authenticated:
                login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            request.session["team_id"] = found.team_id
            messages.success(request, f"Welcome to {found.team.name}.")
            return redirect("agents:home")
        except AppError as exc:
            error = exc.message
    status = 404 if found is None else (400 if error else 200)
    return render(request, "agents/invitation.html", {"invitation": found, "invite_error": error}, status=status)
