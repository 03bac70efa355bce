"""The team's webhook endpoints in the web app: list with last status, add, pause or resume, remove."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from agents import access, roles
from agents.errors import AppError
from agents.selectors import current_team
from surfaces.web.build import require_web
from surfaces.web.webhook_forms import EndpointForm
from webhooks import services
from webhooks.models import EVENTS, Endpoint


def _team_or_404(request):
    team = current_team(request)
    if team is None:
        raise Http404("You are not a member of any team.")
    return team


@login_required
def webhooks(request):
    team = _team_or_404(request)
    actor = access.actor_for_user(team, request.user)
    new_endpoint = None
    form = EndpointForm(request.POST if request.method == "POST" else None)
    if form.is_bound:
        require_web(actor, "webhooks")
    if form.is_bound and form.is_valid():
        try:
            new_endpoint = services.endpoint_create(
                team=team,
                url=form.cleaned_data["url"],
                events=form.cleaned_data["events"],
                include_text=form.cleaned_data["include_text"],
                actor=actor,
            )
            form = EndpointForm()
        except AppError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
    endpoints = Endpoint.objects.filter(team=team).select_related("agent")
    return render(
        request,
        "webhooks/webhooks.html",
        {
            "team": team,
            "endpoints": endpoints,
            "events": EVENTS,
            "new_endpoint": new_endpoint,
            "form": form,
            "may_manage": roles.allows(actor.role, "webhooks"),
        },
        status=400 if form.errors else 200,
    )


def _endpoint(request, public_id) -> tuple[Endpoint, access.Actor]:
    """The team's endpoint (another team's is not found) and who asks, an owner or admin (else 403)."""
    team = _team_or_404(request)
    endpoint = Endpoint.objects.filter(team=team, public_id=public_id).first()
    if endpoint is None:
        raise Http404("No such endpoint.")
    actor = access.actor_for_user(team, request.user)
    require_web(actor, "webhooks")
    return endpoint, actor


@login_required
@require_POST
def webhook_toggle(request, public_id):
    endpoint, actor = _endpoint(request, public_id)
    services.endpoint_update(endpoint=endpoint, changes={"active": not endpoint.active}, actor=actor)
    return redirect("webhooks:webhooks")


@login_required
@require_POST
def webhook_delete(request, public_id):
    endpoint, actor = _endpoint(request, public_id)
    services.endpoint_delete(endpoint=endpoint, actor=actor)
    messages.info(request, "Endpoint removed. Nothing more is sent to it.")
    return redirect("webhooks:webhooks")
