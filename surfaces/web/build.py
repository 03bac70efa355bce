"""Build screen pages: agents, the Overview and Versions tabs, drafts and Publish, API keys.

Views are thin: they check who asks (team scoping in the selectors), call one service, render.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRefresh

from agents import access, roles, services
from agents.errors import AppError
from agents.models import ApiKey
from agents.selectors import agent_for_user, agent_state, current_team, teams_for_user, version_diff
from memory.tools import builder as memory_builder
from memory.tools.form_words import SETTING_FORM_LABELS
from surfaces.web.forms import AgentNewForm, ApiKeyForm, BuilderForm, DraftForm, NextForm, TeamSwitchForm, cleaned


def _team_or_404(request):
    team = current_team(request)
    if team is None:
        raise Http404("You are not a member of any team.")
    return team


def require_web(actor: access.Actor, permission: str) -> None:
    """The web's refusal of an operation the actor's role does not allow: the 403 page, which says
    who may do it (templates/403.html)."""
    try:
        access.require(actor, permission)
    except AppError as exc:
        raise PermissionDenied(exc.message) from None


@login_required
def home(request):
    team = _team_or_404(request)
    agents = list(team.agents.all())
    if len(agents) == 1 and not request.GET.get("all"):
        return redirect("agents:overview", public_id=agents[0].public_id)
    return render(request, "agents/home.html", {"team": team, "agents": agents})


@login_required
@require_POST
def switch_team(request):
    form = TeamSwitchForm(request.POST, teams=teams_for_user(request.user))
    if form.is_valid():  # not one of the user's teams: nothing changes
        request.session["team_id"] = form.cleaned_data["team"]
    return redirect("agents:home")


@login_required
@require_POST
def agent_new(request):
    team = _team_or_404(request)
    name = cleaned(AgentNewForm(request.POST))["name"]
    try:
        agent = services.agent_create(team=team, name=name, user=request.user)
    except AppError as exc:
        # Refused (an empty name, or one over its column's 120 characters): the page says why, as a 400.
        messages.error(request, exc.message)
        return render(request, "agents/home.html", {"team": team, "agents": list(team.agents.all())}, status=400)
    return redirect("agents:overview", public_id=agent.public_id)


def build_context(request, agent, tab: str, **extra) -> dict:
    """What every Build-screen tab shows: the agent, its tabs, the draft bar, the Builder panel."""
    request.session["team_id"] = agent.team_id
    log = request.session.get("builder_log", {}).get(agent.public_id, [])
    fresh = bool(log and log[-1].get("fresh"))  # just answered: show the panel open, once
    if fresh:
        log[-1]["fresh"] = False
        request.session.modified = True
    builder = {
        "builder_log": log,
        "builder_open": fresh or bool(request.GET.get("builder")),
        # The settings the Builder just changed, highlighted once on the form.
        "builder_fields": log[-1].get("fields", []) if fresh else [],
    }
    state = agent_state(agent)
    return {"agent": agent, "tab": tab, **state, "publish_warnings": _publish_warnings(state), **builder, **extra}


def _publish_warnings(state) -> list[str]:
    """What Publish would put live that deserves a second look: a category the defaults leave out,
    opened by the instructions while ask first is off (R13, R28)."""
    return memory_builder.publish_warnings(state["config"]) if state["draft"] else []


@login_required
def overview(request, public_id):
    agent = agent_for_user(request.user, public_id)
    errors = []
    if request.method == "POST":
        form = DraftForm(request.POST)
        if form.is_valid():
            try:
                services.agent_draft_update(agent=agent, changes=form.cleaned_data, user=request.user)
                messages.success(request, "Saved to the draft. Publish when ready.")
                return redirect("agents:overview", public_id=public_id)
            except AppError as exc:
                form.add_error(None, exc.message)
        errors = [message for field_errors in form.errors.values() for message in field_errors]
    ctx = build_context(request, agent, "overview", errors=errors)
    ctx["actions_text"] = "\n".join(f"{a['name']} = {a['label']}" for a in ctx["config"]["actions"])
    # The snippet goes on the customer's site, so the script's address is absolute.
    ctx["embed_src"] = request.build_absolute_uri(reverse("embed:script"))
    return render(request, "agents/overview.html", ctx)


@login_required
@require_POST
def draft_publish(request, public_id):
    agent = agent_for_user(request.user, public_id)
    try:
        version = services.agent_publish(agent=agent, user=request.user)
        messages.success(request, f"Published version {version.number}.")
    except AppError as exc:
        messages.error(request, exc.message)
    return redirect(NextForm(request.POST, agent=agent).destination())


@login_required
@require_POST
def draft_discard(request, public_id):
    agent = agent_for_user(request.user, public_id)
    services.agent_draft_discard(agent=agent)
    messages.info(request, "Unpublished changes discarded.")
    return redirect(NextForm(request.POST, agent=agent).destination())


BUILDER_LOG_SIZE = 20


@login_required
@require_POST
def builder(request, public_id):
    """The Builder side panel: one message in, the reply and what changed out. The exchange is
    kept in the session (the team member's own words, never an end user's) so the panel shows
    it on every tab. A change refreshes the page so the form and the draft bar show it."""
    agent = agent_for_user(request.user, public_id)
    form = BuilderForm(request.POST, agent=agent)
    message = cleaned(form)["message"]
    entry = {"you": message[: memory_builder.MAX_MESSAGE_CHARS], "fresh": True}
    try:
        before = services.agent_draft_config(agent)["memorySettings"]
        result = memory_builder.builder_message(agent=agent, message=message, user=request.user)
        after = (result["draft"] or services.agent_draft_config(agent))["memorySettings"]
        fields = [key for key in after if after[key] != before.get(key)]
        entry.update(reply=result["reply"], changes=result["changes"], fields=fields)
        if result.get("field"):  # a refusal about one setting links to its field on the Memory tab
            entry.update(field=result["field"], field_label=SETTING_FORM_LABELS.get(result["field"], ""))
    except AppError as exc:
        entry.update(reply=exc.message, changes=[], error=True)
    logs = request.session.get("builder_log", {})
    log = [{**item, "fresh": False} for item in logs.get(public_id, [])] + [entry]
    logs[public_id] = log[-BUILDER_LOG_SIZE:]
    request.session["builder_log"] = logs
    if request.htmx:
        if entry.get("changes"):
            return HttpResponseClientRefresh()
        return render(request, "agents/_builder_log.html", {"agent": agent, "builder_log": logs[public_id]})
    return redirect(form.destination())


@login_required
def versions(request, public_id):
    agent = agent_for_user(request.user, public_id)
    all_versions = list(agent.versions.select_related("published_by").order_by("-number"))
    diff = None
    if len(all_versions) > 1:
        numbers = {v.number: v for v in all_versions}
        try:
            a = numbers.get(int(request.GET.get("a", all_versions[1].number)))
            b = numbers.get(int(request.GET.get("b", all_versions[0].number)))
        except ValueError:
            a = b = None
        if a and b:
            diff = version_diff(a, b)
    ctx = build_context(request, agent, "versions", versions=all_versions, diff=diff)
    if request.htmx and request.GET.get("partial") == "diff":
        return render(request, "agents/_version_diff.html", ctx)
    return render(request, "agents/versions.html", ctx)


@login_required
@require_POST
def version_restore(request, public_id, number):
    agent = agent_for_user(request.user, public_id)
    try:
        services.agent_version_restore(agent=agent, number=number, user=request.user)
        messages.success(request, f"Version {number} is now the draft. Publish to make it live.")
    except AppError as exc:
        messages.error(request, exc.message)
    return redirect("agents:versions", public_id=public_id)


@login_required
def api_keys(request):
    """The team's keys with who made each and when it was last used; owners and admins make and
    revoke them (anyone else's POST is the 403 page)."""
    team = _team_or_404(request)
    actor = access.actor_for_user(team, request.user)
    new_key = None
    if request.method == "POST":
        require_web(actor, "api_keys")
        form = ApiKeyForm(request.POST)
        if not form.is_valid():
            messages.error(request, form.errors["name"][0])
            return render(request, "agents/api_keys.html", _keys_context(team, actor), status=400)
        _, new_key = services.api_key_create(
            team=team, name=form.cleaned_data["name"], created_by=request.user, actor=actor
        )
    return render(request, "agents/api_keys.html", {**_keys_context(team, actor), "new_key": new_key})


def _keys_context(team, actor) -> dict:
    keys = ApiKey.objects.filter(team=team).select_related("created_by").order_by("-created_at", "-id")
    return {"team": team, "keys": keys, "may_manage": roles.allows(actor.role, "api_keys")}


@login_required
@require_POST
def api_key_revoke(request, key_id):
    team = _team_or_404(request)
    key = ApiKey.objects.filter(team=team, pk=key_id).select_related("team").first()
    if key is None:
        raise Http404("No such key.")
    actor = access.actor_for_user(team, request.user)
    require_web(actor, "api_keys")
    services.api_key_revoke(key=key, actor=actor)
    messages.info(request, f"Key {key.prefix}… revoked. Every server refuses it within a second.")
    return redirect("agents:api_keys")


def healthz(request):
    return HttpResponse("ok", content_type="text/plain")
