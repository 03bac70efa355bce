"""The Memory tab's checks and note preview (the tab's pages are `tab_views`), one memory's page, Try, Apply, and a conversation's transcript.

Views are thin: they check who asks (`agent_for_user`: another team's agent is a 404), call one
service or selector, and render the page, or only the named partial for an htmx request. Every
change to a memory goes through `memory.store.services`, so the guards in `policy` and the audit rows
cannot be skipped.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from agents.end_user_ids import MAX_END_USER_ID_CHARS, end_user_id_refusal
from agents.errors import AppError
from agents.models import AgentVersion
from agents.selectors import agent_for_user, agent_state, end_user_of
from memory import guards as policy
from memory.guards.instructions import instruction_checks
from memory.store import services
from memory.store.note import note_lines, render_note
from memory.store.people import conversation_for_agent, end_user_for_agent, erase_summary, memory_facts, transcript
from memory.store.selectors import memory_of
from memory.store.version import version_of
from memory.tools import apply as memory_apply
from memory.tools import trial, trial_jobs
from surfaces.web.build import build_context
from surfaces.web.forms import cleaned
from surfaces.web.memory.forms import EraseForm, LineDeleteForm, LineEditForm, ReplaceForm, StopForm, TryForm

# --- The tab ---------------------------------------------------------------------------------


def _note_context(agent, external_id: str) -> dict:
    """The exact note a chat's agent would receive now for this end user (R17)."""
    external_id = external_id or ""
    # The id as typed, checked as every surface checks it (never trimmed into someone else's).
    refusal = end_user_id_refusal(external_id) if external_id else None
    end_user = end_user_of(agent, external_id) if external_id and refusal is None else None
    memory = memory_of(end_user) if end_user else None
    return {
        "note_for": external_id[:MAX_END_USER_ID_CHARS],
        "note_end_user": end_user,
        "note_memory": memory,
        "note_text": render_note(note_lines(memory)),
        "note_refused": refusal[1] if refusal else "",
        "note_unknown": bool(external_id) and refusal is None and end_user is None,
    }


@login_required
@require_GET
def instruction_check(request, public_id):
    """The instruction checks for text being typed (htmx, live)."""
    agent = agent_for_user(request.user, public_id)
    text = request.GET.get("instructions", "")[:4000]
    checks = instruction_checks(text, ask_first=request.GET.get("askFirst") == "on")
    return render(request, "memory/_checks.html", {"agent": agent, "checks": checks})


@login_required
@require_GET
def note_preview(request, public_id):
    agent = agent_for_user(request.user, public_id)
    ctx = {"agent": agent, **_note_context(agent, request.GET.get("note_for", ""))}
    ctx["published_ms"] = AgentVersion.objects.published(agent).config["memorySettings"]
    if request.htmx:
        return render(request, "memory/_note.html", ctx)
    return redirect(f"{reverse('memory:tab', args=[public_id])}?{urlencode({'note_for': ctx['note_for']})}#note")


# --- Try on past conversations ----------------------------------------------------------------


def _try_context(request, agent, job, **extra) -> dict:
    ctx = build_context(request, agent, "memory", **extra)
    ctx.update(
        job=job,
        people=job.people if job else trial.DEFAULT_PEOPLE,
        try_sizes=(5, 10, 20),
        ms=(job.config if job else ctx["config"])["memorySettings"],
        try_people=trial_jobs.trial_people(job) if job else [],
        try_stalled=bool(job and trial_jobs.trial_is_stalled(job)),
    )
    return ctx


@login_required
def try_page(request, public_id):
    """GET: the Try page, with the latest Try's progress or result (never a model call).
    POST: start a Try of the draft settings on the newest few end users, as a background job."""
    agent = agent_for_user(request.user, public_id)
    if request.method == "POST":
        form = TryForm(request.POST)
        if not form.is_valid():
            words = " ".join(word for words in form.errors.values() for word in words)
            ctx = _try_context(request, agent, trial_jobs.trial_latest(agent), try_error=words)
            return render(request, "memory/try.html", ctx, status=400)
        state = agent_state(agent)  # the draft's settings when there is a draft, else the published ones
        try:
            job = trial_jobs.trial_start(
                agent=agent,
                config=state["config"],
                draft=state["draft"] is not None,
                people=form.cleaned_data["n"],
                user=request.user,
                include_open=form.cleaned_data["include_open"],
            )
        except AppError as exc:
            ctx = _try_context(request, agent, trial_jobs.trial_latest(agent), try_error=exc.message)
            return render(request, "memory/try.html", ctx, status=exc.status)
        return redirect("memory:try_status", public_id=public_id, job_id=job.pk)
    if request.method != "GET":
        return HttpResponseNotAllowed(["GET", "POST"])
    return render(request, "memory/try.html", _try_context(request, agent, trial_jobs.trial_latest(agent)))


def _try_job_or_404(agent, job_id):
    job = trial_jobs.trial_for_agent(agent, job_id)
    if job is None:
        raise Http404("No such Try.")
    return job


@login_required
@require_GET
def try_status(request, public_id, job_id):
    """One Try: its progress while it runs (htmx polls the partial), then what it found."""
    agent = agent_for_user(request.user, public_id)
    ctx = _try_context(request, agent, _try_job_or_404(agent, job_id))
    if request.htmx:
        return render(request, "memory/_try_job.html", ctx)
    return render(request, "memory/try.html", ctx)


@login_required
@require_POST
def try_cancel(request, public_id, job_id):
    agent = agent_for_user(request.user, public_id)
    job = trial_jobs.trial_cancel(job=_try_job_or_404(agent, job_id))
    if request.htmx:
        return render(request, "memory/_try_job.html", _try_context(request, agent, job))
    return redirect("memory:try_status", public_id=public_id, job_id=job.pk)


# --- Apply to what is already kept -----------------------------------------------------------


def _job_or_404(agent, job_id):
    job = memory_apply.apply_for_agent(agent, job_id)
    if job is None:
        raise Http404("No such Apply.")
    return job


def _job_response(request, agent, job):
    ctx = {"agent": agent, "job": job, "job_stalled": memory_apply.apply_is_stalled(job)}
    if request.htmx:
        # The job being watched ends in place: only this card changes, so nothing typed elsewhere
        # on the page is lost (the list and the chart are on People and Activity). Once it has
        # ended, panels that show memories (the note preview) are told to read them again.
        response = render(request, "memory/_apply.html", ctx)
        if not job.is_active:
            response["HX-Trigger"] = "memoryChanged"
        return response
    return redirect(f"{reverse('memory:tab', args=[agent.public_id])}#apply")


@login_required
@require_POST
def apply_start(request, public_id):
    agent = agent_for_user(request.user, public_id)
    try:
        job = memory_apply.apply_start(agent=agent, user=request.user)
    except AppError as exc:
        messages.error(request, exc.message)
        job = memory_apply.apply_latest(agent)
        if request.htmx and job is not None:
            ctx = {
                "agent": agent,
                "job": job,
                "job_stalled": memory_apply.apply_is_stalled(job),
                "apply_error": exc.message,
            }
            return render(request, "memory/_apply.html", ctx)
        return redirect(f"{reverse('memory:tab', args=[public_id])}#apply")
    return _job_response(request, agent, job)


@login_required
@require_GET
def apply_status(request, public_id, job_id):
    agent = agent_for_user(request.user, public_id)
    job = _job_or_404(agent, job_id)
    if request.htmx:
        return _job_response(request, agent, job)
    ctx = build_context(request, agent, "memory", job=job, job_stalled=memory_apply.apply_is_stalled(job))
    return render(request, "memory/apply.html", ctx)


@login_required
@require_POST
def apply_cancel(request, public_id, job_id):
    agent = agent_for_user(request.user, public_id)
    job = memory_apply.apply_cancel(job=_job_or_404(agent, job_id))
    return _job_response(request, agent, job)


@login_required
@require_POST
def apply_resume(request, public_id, job_id):
    agent = agent_for_user(request.user, public_id)
    job = _job_or_404(agent, job_id)
    try:
        job = memory_apply.apply_resume(job=job)
    except AppError as exc:
        messages.error(request, exc.message)
    return _job_response(request, agent, job)


# --- One memory ------------------------------------------------------------------------------


def _end_user_or_404(agent, end_user_id):
    end_user = end_user_for_agent(agent, end_user_id)
    if end_user is None:
        raise Http404("No such end user.")
    return end_user


def _memory_context(request, agent, end_user, **extra) -> dict:
    facts = memory_facts(end_user)
    facts["note_text"] = render_note(note_lines(facts["memory"]))
    facts["version"] = version_of(facts["memory"])
    return {"agent": agent, "end_user": end_user, **facts, **extra}


def refused_words(error: policy.MemoryRefused, *, kept_typing: bool, cleared: bool = False) -> str:
    """One sentence for a refused team edit, saying once why and what happens to what was typed."""
    if error.reason in policy.SECRET_REASONS:
        words = f"Not saved: it looks like {policy.reason_label(error.reason)}, which a memory never keeps. Nothing changed."
        return words + (" Your edit was cleared: type the line again without it." if cleared else "")
    if error.reason == "changed":
        return error.message
    words = error.message
    if kept_typing:
        words = words.replace(" Shorten it and try again.", "").replace(" Remove it and try again.", "")
        words += " Nothing changed; your text is still in the box to fix."
    return f"Not saved: {words}"


def _after_change(
    request,
    agent,
    end_user,
    *,
    flash: str = "",
    error: policy.MemoryRefused | None = None,
    editing=None,
    adding=None,
    undo_text="",
):
    """An htmx edit gets the lines back (and the runs, out of band); a plain form post a redirect."""
    kept_typing = bool((editing and editing.get("value")) or adding)
    if request.htmx:
        ctx = _memory_context(request, agent, end_user, flash=flash, refused=error, editing=editing, oob=True)
        cleared = bool(editing and editing.get("value") == "")
        ctx["refused_text"] = refused_words(error, kept_typing=kept_typing, cleared=cleared) if error else ""
        ctx["adding"] = adding or ""
        ctx["refused_add"] = bool(error and adding is not None)  # a refused line to add: back in its box
        ctx["undo_text"] = undo_text  # a deleted line's words, as the page sent them: the server keeps none
        return render(request, "memory/_lines.html", ctx)
    if error:
        messages.error(request, refused_words(error, kept_typing=False))
    elif flash:
        messages.success(request, flash)
    return redirect("memory:detail", public_id=agent.public_id, end_user_id=end_user.pk)


@login_required
@require_GET
def memory_detail(request, public_id, end_user_id):
    agent = agent_for_user(request.user, public_id)
    end_user = _end_user_or_404(agent, end_user_id)
    return _detail_page(request, agent, end_user)


def _detail_page(request, agent, end_user, editing=None):
    if request.htmx and request.GET.get("partial") == "lines":
        return render(request, "memory/_lines.html", _memory_context(request, agent, end_user))
    facts = _memory_context(request, agent, end_user)
    facts.pop("agent")
    ctx = build_context(request, agent, "memory", editing=editing, **facts)
    return render(request, "memory/memory.html", ctx)


@login_required
def line_edit(request, public_id, end_user_id, index):
    """GET: the inline form for one line. POST: correct it (the same guards as every path)."""
    agent = agent_for_user(request.user, public_id)
    end_user = _end_user_or_404(agent, end_user_id)
    memory = memory_of(end_user)
    if request.method == "GET":
        lines = memory.lines if memory else []
        if not 1 <= index <= len(lines):
            raise Http404("No such line.")
        if not request.htmx:  # without JavaScript: the whole page, with this line's form open
            return _detail_page(request, agent, end_user, editing={"index": index, "value": None})
        return render(
            request,
            "memory/_line_form.html",
            {
                "agent": agent,
                "end_user": end_user,
                "index": index,
                "line": lines[index - 1],
                "value": None,
                "version": version_of(memory),
            },
        )
    edit = cleaned(LineEditForm(request.POST))
    text = edit["text"]
    try:
        services.memory_line_edit(
            end_user=end_user, index=index, text=text, was=edit["was"], made_on=edit["version"], actor=request.user
        )
    except policy.MemoryRefused as exc:
        # What was typed stays in the box to fix, except a secret, which is cleared (never echoed).
        if exc.reason == "changed":
            editing = None
        elif exc.reason in policy.SECRET_REASONS:
            editing = {"index": index, "value": ""}
        else:
            editing = {"index": index, "value": text}
        return _after_change(request, agent, end_user, error=exc, editing=editing)
    return _after_change(request, agent, end_user, flash=f"Line {index} corrected.")


@login_required
@require_POST
def line_delete(request, public_id, end_user_id, index):
    agent = agent_for_user(request.user, public_id)
    end_user = _end_user_or_404(agent, end_user_id)
    change = cleaned(LineDeleteForm(request.POST))
    try:
        services.memory_line_delete(
            end_user=end_user, index=index, was=change["was"], made_on=change["version"], actor=request.user
        )
    except policy.MemoryRefused as exc:
        return _after_change(request, agent, end_user, error=exc)
    return _after_change(request, agent, end_user, flash=f"Line {index} deleted.", undo_text=change["was"])


@login_required
@require_POST
def memory_replace(request, public_id, end_user_id):
    """Replace all: the whole text at once, refused whole (nothing changed) by the guards."""
    agent = agent_for_user(request.user, public_id)
    end_user = _end_user_or_404(agent, end_user_id)
    change = cleaned(ReplaceForm(request.POST))
    try:
        services.memory_set(end_user=end_user, text=change["text"], made_on=change["version"], actor=request.user)
    except policy.MemoryRefused as exc:
        return _after_change(request, agent, end_user, error=exc)
    return _after_change(request, agent, end_user, flash="Memory replaced.")


@login_required
@require_POST
def memory_stop(request, public_id, end_user_id):
    agent = agent_for_user(request.user, public_id)
    end_user = _end_user_or_404(agent, end_user_id)
    stop = cleaned(StopForm(request.POST))["stop"]
    (services.memory_stop if stop else services.memory_resume)(end_user=end_user, actor=request.user)
    messages.success(
        request,
        f"Stopped: {end_user.external_id}'s memory is empty and nothing more is kept."
        if stop
        else f"Resumed: memory of {end_user.external_id} starts again from their next chat.",
    )
    return redirect("memory:detail", public_id=public_id, end_user_id=end_user.pk)


@login_required
@require_POST
def memory_delete(request, public_id, end_user_id):
    agent = agent_for_user(request.user, public_id)
    end_user = _end_user_or_404(agent, end_user_id)
    services.memory_delete(end_user=end_user, actor=request.user)
    messages.success(request, f"Deleted {end_user.external_id}'s memory. Their older chats cannot bring it back.")
    return redirect("memory:detail", public_id=public_id, end_user_id=end_user.pk)


@login_required
def end_user_erase(request, public_id, end_user_id):
    """GET: a confirmation naming what goes. POST: erase the end user and everything about them."""
    agent = agent_for_user(request.user, public_id)
    end_user = _end_user_or_404(agent, end_user_id)
    if request.method == "POST":
        form = EraseForm(request.POST, end_user=end_user)
        if not form.is_valid():
            for words in form.errors.values():
                messages.error(request, " ".join(words))
            return redirect("memory:erase", public_id=public_id, end_user_id=end_user.pk)
        external_id = end_user.external_id
        services.end_user_erase(end_user=end_user)
        messages.success(
            request, f"Erased {external_id}: their memory, conversations, consent and runs on {agent.name} are gone."
        )
        return redirect("memory:people", public_id=public_id)
    ctx = build_context(request, agent, "memory", end_user=end_user, summary=erase_summary(end_user))
    return render(request, "memory/erase.html", ctx)


@login_required
@require_GET
def conversation_transcript(request, public_id, conversation_id):
    agent = agent_for_user(request.user, public_id)
    conversation = conversation_for_agent(agent, conversation_id)
    if conversation is None:
        raise Http404("No such conversation.")
    ctx = build_context(request, agent, "memory", conversation=conversation, items=transcript(conversation))
    return render(request, "memory/transcript.html", ctx)
