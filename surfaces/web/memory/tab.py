"""The Memory tab, split in three: Settings (what memory does and the form), People (everyone who
chatted or is remembered, filtered and paged) and Activity (the chart and the latest Apply).

Views are thin: they check who asks (`agent_for_user`), call one service or selector and render.
A refused setting comes back with everything as it was typed and each error next to its field,
in the form's own words (`memory.tools.form_words`)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from agents import services as agent_services
from agents.errors import AppError
from agents.selectors import agent_for_user
from memory import guards as policy
from memory.guards.instructions import DEFAULT_INSTRUCTIONS, instruction_checks
from memory.models import Memory
from memory.store import services
from memory.store.people import FILTERS, ORDERS, people_page, runs_per_day
from memory.store.selectors import memories_page
from memory.store.settings import QUIET_MINUTES_CHOICES
from memory.tools import apply as memory_apply
from memory.tools.apply_preview import apply_preview
from memory.tools.tab_words import default_lists
from surfaces.web.build import build_context
from surfaces.web.memory.forms import LineAddForm, MemorySettingsForm
from surfaces.web.memory.views import _after_change, _end_user_or_404, _note_context


@login_required
def memory_tab(request, public_id):
    """Settings: the introduction, the form, Try and Apply, and what the defaults keep."""
    agent = agent_for_user(request.user, public_id)
    errors, form, error_list = {}, None, []
    if request.method == "POST":
        settings_form = MemorySettingsForm(request.POST, plan_has_memory=agent.team.has_memory)
        if settings_form.is_valid():
            try:
                agent_services.agent_draft_update(
                    agent=agent, changes={"memorySettings": settings_form.cleaned_data}, user=request.user
                )
                messages.success(request, "Memory settings saved to the draft. They apply once you publish.")
                return redirect("memory:tab", public_id=public_id)
            except AppError as exc:
                settings_form.refuse(exc)
        errors, form = settings_form.errors_by_field(), settings_form.typed()
        error_list = settings_form.error_summary()
    ctx = build_context(
        request,
        agent,
        "memory",
        subtab="settings",
        errors=errors,
        error_list=error_list,
        quiet_choices=QUIET_MINUTES_CHOICES,
    )
    ms = ctx["config"]["memorySettings"]
    form = form or {key: ms[key] for key in MemorySettingsForm.base_fields}
    form["quietMinutes"] = str(form["quietMinutes"])
    ctx.update(
        ms=ms,
        form=form,
        published_ms=ctx["published"].config["memorySettings"],
        checks=instruction_checks(form["instructions"], ask_first=form["askFirst"]),
        default_instructions=DEFAULT_INSTRUCTIONS,
        defaults=default_lists(),
        try_sizes=(5, 10, 20),
    )
    recent, _more = memories_page(agent_id=agent.pk, limit=10)
    ctx["note_people"] = [read["endUserId"] for read in recent]
    ctx.update(_note_context(agent, request.GET.get("note_for") or (ctx["note_people"][0] if recent else "")))
    job = memory_apply.apply_latest(agent)
    ctx["job"] = job
    ctx["job_stalled"] = bool(job and memory_apply.apply_is_stalled(job))
    status = 400 if errors else 200
    return render(request, "memory/tab.html", ctx, status=status)


def _people_context(request, agent) -> dict:
    show, order = request.GET.get("show", ""), request.GET.get("order", "")
    choices = {"filters": FILTERS, "orders": ORDERS}
    try:
        page = people_page(
            agent, query=request.GET.get("q", ""), show=show, order=order, after=request.GET.get("after", "")
        )
        return {"people": page, "list_error": None, **choices}
    except AppError as exc:
        return {"people": people_page(agent, show=show, order=order), "list_error": exc.message, **choices}


@login_required
@require_GET
def people(request, public_id):
    """Everyone who chatted with the agent or is remembered, newest change first (or another order),
    50 at a time."""
    agent = agent_for_user(request.user, public_id)
    if request.htmx and request.headers.get("HX-Target") == "memories":
        return render(request, "memory/_memories.html", {"agent": agent, **_people_context(request, agent)})
    ctx = build_context(request, agent, "memory", subtab="people", **_people_context(request, agent))
    return render(request, "memory/people.html", ctx)


@login_required
@require_GET
def activity(request, public_id):
    """What memory did over the last 30 days, and the latest Apply."""
    agent = agent_for_user(request.user, public_id)
    job = memory_apply.apply_latest(agent)
    ctx = build_context(
        request,
        agent,
        "memory",
        subtab="activity",
        chart_days=runs_per_day(agent),
        job=job,
        job_stalled=bool(job and memory_apply.apply_is_stalled(job)),
    )
    if request.htmx and request.GET.get("partial") == "chart":
        return render(request, "memory/_chart.html", ctx)
    return render(request, "memory/activity.html", ctx)


@login_required
@require_POST
def line_add(request, public_id, end_user_id):
    """Add one line to a memory (`services.memory_line_add`: under the row lock, the same guards,
    memory on included, and the same audit row as every edit). The answer names the line's real
    number, and says so when the memory had changed since the page was made."""

    agent = agent_for_user(request.user, public_id)
    end_user = _end_user_or_404(agent, end_user_id)
    form = LineAddForm(request.POST)
    if not form.is_valid():
        refused = policy.MemoryRefused("empty", " ".join(word for words in form.errors.values() for word in words))
        return _after_change(request, agent, end_user, error=refused, adding="")
    text = form.cleaned_data["text"]
    try:
        added = services.memory_line_add(
            end_user=end_user, text=text, made_on=form.cleaned_data["version"], actor=request.user
        )
    except policy.MemoryRefused as exc:
        keep = exc.reason not in policy.SECRET_REASONS
        return _after_change(request, agent, end_user, error=exc, adding=text if keep else "")
    flash = f"Line {added.number} added."
    if added.changed_meanwhile:
        flash += " The memory had changed since you opened it: here it is as it is now."
    return _after_change(request, agent, end_user, flash=flash)


@login_required
def apply_confirm(request, public_id):
    """The step before Apply: how many memories it reviews, against which version and which
    instructions. GET calls no model; POST previews the review on a sample (saves nothing)."""
    agent = agent_for_user(request.user, public_id)
    ctx = build_context(request, agent, "memory", subtab="settings")
    if request.method == "POST":
        ctx["preview"] = apply_preview(agent=agent)
    job = memory_apply.apply_latest(agent)
    ctx.update(
        live_ms=ctx["published"].config["memorySettings"],
        to_review=Memory.objects.filter(agent=agent).exclude(text="").count(),
        job=job,
        job_running=bool(job and job.is_active and not memory_apply.apply_is_stalled(job)),
    )
    return render(request, "memory/apply_confirm.html", ctx)
