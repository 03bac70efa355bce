"""The Team page (members and invitations) and the invitation link. Thin: each view checks who
asks and calls `agents.team`."""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from . import team as team_services
from .errors import AppError
from .models import Invitation, Membership
from .views import _team_or_404


@login_required
def team_page(request):
    team = _team_or_404(request)
    owner = team_services.is_owner(team, request.user)
    error, typed = None, ""
    if request.method == "POST":
        typed = request.POST.get("email", "")
        try:
            invitation = team_services.invitation_create(
                team=team,
                email=typed,
                invited_by=request.user,
                link_for=lambda token: request.build_absolute_uri(reverse("agents:invitation", args=[token])),
            )
            messages.success(
                request,
                f"Invitation sent to {invitation.email}. The link works once, for {team_services.INVITATION_DAYS} days.",
            )
            return redirect("agents:team")
        except AppError as exc:
            error = exc.message
    ctx = {
        "team": team,
        "owner": owner,
        "members": team_services.members(team),
        "invitations": team_services.open_invitations(team) if owner else [],
        "invite_error": error,
        "typed_email": typed,
    }
    return render(request, "agents/team.html", ctx, status=400 if error else 200)


@login_required
@require_POST
def member_remove(request, membership_id):
    team = _team_or_404(request)
    membership = Membership.objects.filter(team=team, pk=membership_id).select_related("user").first()
    if membership is None:
        raise Http404("No such member.")
    try:
        team_services.member_remove(team=team, membership=membership, user=request.user)
        messages.success(request, f"{membership.user.email or membership.user.username} was removed from {team.name}.")
    except AppError as exc:
        messages.error(request, exc.message)
    return redirect("agents:team")


@login_required
@require_POST
def invitation_revoke(request, invitation_id):
    team = _team_or_404(request)
    invitation = Invitation.objects.filter(team=team, pk=invitation_id).first()
    if invitation is None:
        raise Http404("No such invitation.")
    try:
        team_services.invitation_revoke(invitation=invitation, user=request.user)
        messages.info(request, f"The invitation to {invitation.email} was withdrawn: its link no longer works.")
    except AppError as exc:
        messages.error(request, exc.message)
    return redirect("agents:team")


def invitation(request, token):
    """The link in the e-mail: join as the signed-in user, or set a password for a new account."""
    found = team_services.invitation_for_token(token)
    error = None
    if request.method == "POST" and found is not None:
        try:
            user = team_services.invitation_accept(
                token=token, user=request.user, password=request.POST.get("password", "")
            )
            if not request.user.is_authenticated:
                login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            request.session["team_id"] = found.team_id
            messages.success(request, f"Welcome to {found.team.name}.")
            return redirect("agents:home")
        except AppError as exc:
            error = exc.message
    status = 404 if found is None else (400 if error else 200)
    return render(request, "agents/invitation.html", {"invitation": found, "invite_error": error}, status=status)
