"""The memory writer: what a quiet-window run reads, what it asks the model, and the guards in
code that every operation passes after the model (R6, R7, R12, R14), then one short write under a
row lock (R15).

The same `apply_operations` serves the quiet-window run, Try (which saves nothing) and Apply
(review mode: no line may be added).
"""
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.engines import EngineError, EngineResult, get_engine
from agents.models import Conversation, EndUser

from . import policy
from .dates import short_date
from .instructions import REVIEW_INSTRUCTIONS, layered_instructions
from .models import Memory, MemoryRun
from .selectors import read_cutoff, writer_input
from .writer_schema import OUTPUT_SCHEMA

TASK = "memory_operations"
OPS = ("keep", "add", "replace", "remove")
RETRY_BACKOFF_MINUTES = (1, 5, 15)  # after a failed run; then the failure shows on the Memory tab
CONTEXT_NOTE = "The agent's reply: context only, never a source."


@dataclass
class Outcome:
    """What a set of operations did to the lines, after the guards."""

    before: list[str]
    lines: list[str]
    added: int = 0
    replaced: int = 0
    removed: int = 0
    dropped: Counter = field(default_factory=Counter)
    changes: list[dict] = field(default_factory=list)  # for Try's before/after: {"op", "old", "new"}

    @property
    def changed(self) -> bool:
        return self.lines != self.before


def _clean_text(value: Any) -> str:
    return " ".join(str(value).split()) if isinstance(value, str) else ""


def apply_operations(
    lines: list[str],
    operations: Any,
    *,
    allowed_sources: set[str],
    opened: frozenset[str],
    review: bool = False,
    offered: dict[str, dict] | None = None,
) -> Outcome:
    """Apply the model's operations to `lines`, enforcing in code what the model was asked:

    - an add or replace must cite sources, all among the messages and actions it was given (R12);
    - no line with a secret (R7), an excluded category not opened by the team (R13, R14), or too long;
    - at most MAX_LINES lines (R6); in review mode (Apply) nothing is added (R19).
    Anything refused is dropped and counted by reason, without its words. Lines the operations do
    not mention are kept."""
    if not isinstance(operations, list):
        raise EngineError("The model's answer has no list of operations.", code="model_malformed")
    out = Outcome(before=list(lines), lines=[])
    current: dict[int, str | None] = {n: line for n, line in enumerate(lines, start=1)}
    touched: set[int] = set()
    additions: list[str] = []

    def refuse(reason: str) -> None:
        out.dropped[reason] += 1

    for op in operations:
        if not isinstance(op, dict) or op.get("op") not in OPS:
            refuse("invalid_operation")
            continue
        kind, number = op["op"], op.get("line")
        if kind in ("keep", "replace", "remove"):
            if not isinstance(number, int) or isinstance(number, bool) or number not in current:
                refuse("invalid_operation")
                continue
            if number in touched:
                refuse("conflict")
                continue
        if kind == "keep":
            touched.add(number)
            continue
        if kind == "remove":
            touched.add(number)
            out.changes.append({"op": "remove", "old": current[number], "new": None})
            current[number] = None
            out.removed += 1
            continue
        if kind == "add" and review:
            refuse("added_in_review")
            continue
        sources = op.get("sources")
        if not review and (
            not isinstance(sources, list) or not sources or not set(map(str, sources)) <= allowed_sources
        ):
            refuse("unsourced")
            continue
        text = _clean_text(op.get("text"))
        if not text:
            refuse("invalid_operation")
            continue
        reason = policy.line_refusal(text, opened=opened)
        if not reason and offered is not None and not review:  # R12: only what the cited sources say
            reason = policy.source_refusal(text, [offered[str(s)] for s in sources if str(s) in offered])
        if reason:
            refuse(reason)
            continue
        if kind == "replace":
            touched.add(number)
            if text != current[number]:
                out.changes.append({"op": "replace", "old": current[number], "new": text})
                current[number] = text
                out.replaced += 1
            continue
        existing = {(line or "").casefold() for line in current.values()} | {a.casefold() for a in additions}
        if text.casefold() in existing:
            continue  # already there: nothing to add
        additions.append(text)

    kept = [line for line in current.values() if line is not None]
    room = max(0, policy.MAX_LINES - len(kept))
    for text in additions[:room]:
        out.changes.append({"op": "add", "old": None, "new": text})
    if len(additions) > room:
        out.dropped["too_many_lines"] += len(additions) - room
    out.lines = kept + additions[:room]
    out.added = min(len(additions), room)
    return out


def build_payload(*, lines: list[str], inp: dict, action_labels: dict[str, str], settings: dict, today, mode: str) -> dict:
    """Exactly what the model (or the offline rules) receives. Tool results, files and web pages
    are not in it: the selector never reads them (R12)."""
    return {
        "mode": mode,
        "today": today.isoformat(),
        "instructions": {"default": "see system prompt", "team": settings.get("instructions", "")},
        "lines": [{"n": n, "text": text} for n, text in enumerate(lines, start=1)],
        "messages": [
            {"id": f"m{m['id']}", "at": m["created_at"].isoformat(), "day": short_date(m["created_at"], today), "text": m["text"]}
            for m in inp.get("messages", [])
        ],
        "actions": [
            {
                "id": f"a{a['id']}",
                "at": a["created_at"].isoformat(),
                "day": short_date(a["created_at"], today),
                "name": a["name"],
                "label": action_labels.get(a["name"]) or a["name"].replace("_", " ").capitalize(),
                "status": a["status"],
            }
            for a in inp.get("actions", [])
        ],
        "context": [{"role": "agent", "text": r["text"][:1000], "note": CONTEXT_NOTE} for r in inp.get("replies", [])],
    }


def propose(*, lines: list[str], inp: dict, config: dict, now: datetime, mode: str = "write", engine=None) -> tuple[Outcome, EngineResult]:
    """Ask the engine for operations and pass them through the guards. Saves nothing."""
    settings = config["memorySettings"]
    labels = {a["name"]: a["label"] for a in config.get("actions", [])}
    today = timezone.localtime(now).date()
    payload = build_payload(lines=lines, inp=inp, action_labels=labels, settings=settings, today=today, mode=mode)
    system = layered_instructions(settings.get("instructions", ""))
    if mode == "review":
        system += "\n" + REVIEW_INSTRUCTIONS
    result = (engine or get_engine()).structured(task=TASK, system=system, payload=payload, schema=OUTPUT_SCHEMA)
    operations = result.data.get("operations") if isinstance(result.data, dict) else None
    allowed = {m["id"] for m in payload["messages"]} | {a["id"] for a in payload["actions"]}
    outcome = apply_operations(
        lines,
        operations,
        allowed_sources=allowed,
        offered=policy.sources_from_payload(payload),
        opened=policy.categories_opened_by(settings.get("instructions", "")),
        review=mode == "review",
    )
    return outcome, result


def _published_config(agent) -> dict:
    return agent.versions.order_by("-number").values_list("config", flat=True).first()


def memory_row_for(end_user: EndUser, now: datetime) -> Memory:
    try:
        with transaction.atomic():
            memory, _ = Memory.objects.get_or_create(
                end_user=end_user, defaults={"agent_id": end_user.agent_id, "updated_at": now}
            )
    except IntegrityError:  # a concurrent run created it
        memory = Memory.objects.get(end_user=end_user)
    return memory


def _finish_due(end_user: EndUser, now: datetime, *, more_to_read: bool) -> None:
    """Clear the quiet-window flags the run has answered; when a run read only part of a long
    backlog, leave them due so the next sweep reads on."""
    due = Conversation.objects.filter(end_user=end_user, memory_due_at__isnull=False)
    quiet_ones = [
        pk
        for pk, last_activity, config in due.values_list("id", "last_activity_at", "version__config")
        if last_activity + timedelta(minutes=config["memorySettings"]["quietMinutes"]) <= now
    ]
    Conversation.objects.filter(pk__in=quiet_ones).update(memory_due_at=now if more_to_read else None)


def _record_failure(*, memory: Memory, exc: EngineError, now: datetime, started: float, read_from, attempt_kind: str) -> MemoryRun:
    previous = (memory.last_failure or {}).get("attempts", 0)
    attempts = previous + 1
    with transaction.atomic():
        run = MemoryRun.objects.create(
            memory=memory,
            kind=attempt_kind,
            engine=get_engine().name,
            status=MemoryRun.Status.FAILED,
            error=exc.code[:200],
            attempt=attempts,
            started_at=now,
            read_from=read_from,
            duration_ms=int((time.monotonic() - started) * 1000),
        )
        Memory.objects.filter(pk=memory.pk).update(
            last_failure={"at": now.isoformat(), "code": exc.code, "attempts": attempts}
        )
        if attempts <= len(RETRY_BACKOFF_MINUTES):
            retry_at = now + timedelta(minutes=RETRY_BACKOFF_MINUTES[attempts - 1])
            Conversation.objects.filter(end_user_id=memory.end_user_id, memory_due_at__isnull=False).update(
                memory_due_at=retry_at
            )
        else:  # given up until their next chat; the Memory tab shows last_failure
            Conversation.objects.filter(end_user_id=memory.end_user_id, memory_due_at__isnull=False).update(
                memory_due_at=None
            )
    return run


def run_quiet_window(*, end_user_id: int, now: datetime | None = None, engine=None) -> MemoryRun | None:
    """Read what the person typed and which actions ran since `read_up_to`, and update their memory.

    Guarantees: nothing of a chat that is still active is read (R11); each part is read once
    (`read_up_to` only moves forward, and the write checks that no other run moved it first);
    a stopped memory, memory off or a plan without memory writes nothing; a model failure leaves
    the text and `read_up_to` as they were, records a failed run, and retries later with backoff.
    Idempotent: a second delivery of the same task finds nothing new. Returns the audit row, or
    None when there was nothing to do."""
    now = now or timezone.now()
    end_user = EndUser.objects.select_related("agent__team").filter(pk=end_user_id).first()
    if end_user is None:  # erased since the task was queued
        return None
    config = _published_config(end_user.agent)
    if not config["memorySettings"]["on"] or not end_user.agent.team.has_memory:
        _finish_due(end_user, now, more_to_read=False)
        return None
    memory = memory_row_for(end_user, now)
    for _ in range(3):  # another run may write between our read and our write: read again
        if memory.stopped_at is not None:
            _finish_due(end_user, now, more_to_read=False)
            return None
        read_from = memory.read_up_to
        cutoff = read_cutoff(end_user=end_user, read_from=read_from, now=now)
        inp = writer_input(end_user=end_user, read_from=read_from, read_to=cutoff)
        if not inp["messages"] and not inp["actions"]:
            _finish_due(end_user, now, more_to_read=False)
            return None
        started = time.monotonic()
        try:
            outcome, result = propose(lines=memory.lines, inp=inp, config=config, now=now, engine=engine)
        except EngineError as exc:
            return _record_failure(memory=memory, exc=exc, now=now, started=started, read_from=read_from, attempt_kind=MemoryRun.Kind.QUIET)
        read_to = max([m["created_at"] for m in inp["messages"]] + [a["created_at"] for a in inp["actions"]])
        with transaction.atomic():
            locked = Memory.objects.select_for_update().get(pk=memory.pk)
            if locked.read_up_to != read_from or locked.text != memory.text or locked.stopped_at:
                memory = locked
                continue
            locked.text = "\n".join(outcome.lines)
            locked.read_up_to = read_to
            locked.last_run = {"at": now.isoformat(), "added": outcome.added, "replaced": outcome.replaced, "removed": outcome.removed}
            locked.last_failure = None
            fields = ["text", "read_up_to", "last_run", "last_failure"]
            if outcome.changed:
                locked.updated_at = now
                fields.append("updated_at")
            locked.save(update_fields=fields)
            run = MemoryRun.objects.create(
                memory=locked,
                kind=MemoryRun.Kind.QUIET,
                engine=result.engine,
                status=MemoryRun.Status.SUCCEEDED,
                added=outcome.added,
                replaced=outcome.replaced,
                removed=outcome.removed,
                dropped=dict(outcome.dropped),
                messages_read=len(inp["messages"]),
                actions_read=len(inp["actions"]),
                read_from=read_from,
                read_to=read_to,
                started_at=now,
                duration_ms=int((time.monotonic() - started) * 1000),
                input_tokens=result.input_tokens,
                output_tokens=result.output_tokens,
            )
            _finish_due(end_user, now, more_to_read=inp["read_to"] < cutoff)
        return run
    return None
