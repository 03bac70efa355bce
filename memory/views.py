"""The Memory tab of the Build screen."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from agents import services as agent_services
from agents.config import QUIET_MINUTES_CHOICES
from agents.errors import AppError
from agents.selectors import agent_for_user
from agents.views import build_context

from .instructions import DEFAULT_INSTRUCTIONS


def _settings_from_form(post) -> dict:
    """Typed memory settings from the form; validation itself is `agents.config`'s, as everywhere."""

    def as_int(name):
        raw = post.get(name, "").strip()
        try:
            return int(raw)
        except ValueError:
            raise AppError("invalid_config", f"{name} must be a whole number.", field=f"memorySettings.{name}")

    return {
        "on": post.get("on") == "on",
        "instructions": post.get("instructions", ""),
        "keepForDays": as_int("keepForDays"),
        "quietMinutes": as_int("quietMinutes"),
        "showSwitch": post.get("showSwitch") == "on",
        "askFirst": post.get("askFirst") == "on",
        "privacyUrl": post.get("privacyUrl", ""),
    }


@login_required
def memory_tab(request, public_id):
    agent = agent_for_user(request.user, public_id)
    error = None
    form_values = None
    if request.method == "POST":
        try:
            agent_services.agent_draft_update(
                agent=agent, changes={"memorySettings": _settings_from_form(request.POST)}, user=request.user
            )
            messages.success(request, "Memory settings saved to the draft. They apply once you publish.")
            return redirect("memory:tab", public_id=public_id)
        except AppError as exc:
            error = exc
            form_values = request.POST
    ctx = build_context(
        request,
        agent,
        "memory",
        error=error,
        form_values=form_values,
        quiet_choices=QUIET_MINUTES_CHOICES,
        default_instructions=DEFAULT_INSTRUCTIONS,
    )
    ctx["ms"] = ctx["config"]["memorySettings"]
    return render(request, "memory/tab.html", ctx)
