"""The engine's operations through the guards: what the model (or the offline rules) is given,
what it is asked, and the guards in code that every operation passes after it (R6, R7, R12, R14).
Saves nothing.

The same `apply_operations` serves the quiet-window run (`memory.writer.run`), Try (which saves
nothing) and Apply (review mode: no line may be added).
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

from agents.engines import EngineError, EngineResult, get_engine
from agents.models import AgentVersion
from memory import guards as policy
from memory.guards.instructions import REVIEW_INSTRUCTIONS, layered_instructions
from memory.writer.dates import short_date
from memory.writer.schema import OUTPUT_SCHEMA

TASK = "memory_operations"
OPS = ("keep", "add", "replace", "remove")
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


def malformed(what: str) -> EngineError:
    return EngineError(f"The model's answer does not follow the output contract: {what}.", code="model_malformed")


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
    Anything the guards refuse is dropped and counted by reason, without its words. An answer that
    does not follow the output contract (no list, an unknown operation, a line that does not exist,
    one line named twice, an add without text) is an engine failure (EngineError model_malformed):
    the run is retried later and nothing is read. Lines the operations do not mention are kept."""
    if not isinstance(operations, list):
        raise malformed("no list of operations")
    editing = _Editing(
        out=Outcome(before=list(lines), lines=[]),
        current={n: line for n, line in enumerate(lines, start=1)},
        guard=_LineGuard(allowed_sources=allowed_sources, opened=opened, review=review, offered=offered),
    )
    for op in operations:
        if not isinstance(op, dict) or op.get("op") not in OPS:
            raise malformed("an operation is not one of keep, add, replace, remove")
        if op["op"] == "add":
            editing.add(op)
        else:
            editing.on_line(op["op"], editing.named_line(op), op)
    return editing.finish()


@dataclass
class _LineGuard:
    """What an added or replaced line must pass (R7, R12, R13, R14; in review mode, R19)."""

    allowed_sources: set[str]
    opened: frozenset[str]
    review: bool
    offered: dict[str, dict] | None

    def refusal(self, text: str, sources: Any) -> str | None:
        """Why the line `text`, citing `sources`, is refused, or None when it may be written."""
        cited = [str(s) for s in sources] if isinstance(sources, list) else []
        if not self.review and (not cited or not set(cited) <= self.allowed_sources):
            return "unsourced"
        reason = policy.line_refusal(text, opened=self.opened)
        if not reason and self.offered is not None and not self.review:  # R12: only what the cited sources say
            reason = policy.source_refusal(text, [self.offered[s] for s in cited if s in self.offered])
        return reason or None


@dataclass
class _Editing:
    """The lines while `apply_operations` goes through the operations, in order."""

    out: Outcome
    current: dict[int, str | None]  # line number -> its text now (None: removed)
    guard: _LineGuard
    touched: set[int] = field(default_factory=set)  # the lines an operation has named
    additions: list[str] = field(default_factory=list)

    def named_line(self, op: dict) -> int:
        """The line a keep, replace or remove names: one that exists, not named before."""
        number = op.get("line")
        if not isinstance(number, int) or isinstance(number, bool) or number not in self.current:
            raise malformed("an operation names a line that does not exist")
        if number in self.touched:
            raise malformed("two operations name the same line")
        return number

    def guarded_text(self, op: dict) -> str | None:
        """The operation's text when the guards let it through; None (the refusal counted) when not."""
        text = _clean_text(op.get("text"))
        if not text:
            raise malformed("an add or replace has no text")
        reason = self.guard.refusal(text, op.get("sources"))
        if reason:
            self.out.dropped[reason] += 1
            return None
        return text

    def on_line(self, kind: str, number: int, op: dict) -> None:
        """A keep, remove or replace of line `number`. A refused replace leaves the line unnamed."""
        if kind == "keep":
            self.touched.add(number)
        elif kind == "remove":
            self.touched.add(number)
            self.out.changes.append({"op": "remove", "old": self.current[number], "new": None})
            self.current[number] = None
            self.out.removed += 1
        elif (text := self.guarded_text(op)) is not None:
            self.touched.add(number)
            if text != self.current[number]:
                self.out.changes.append({"op": "replace", "old": self.current[number], "new": text})
                self.current[number] = text
                self.out.replaced += 1

    def add(self, op: dict) -> None:
        """An add: refused in review mode, dropped by the guards, or kept for the end unless already there."""
        if self.guard.review:
            self.out.dropped["added_in_review"] += 1
            return
        text = self.guarded_text(op)
        if text is None:
            return
        existing = {(line or "").casefold() for line in self.current.values()} | {a.casefold() for a in self.additions}
        if text.casefold() not in existing:  # already there: nothing to add
            self.additions.append(text)

    def finish(self) -> Outcome:
        """The lines kept, then the additions while there is room (R6); the rest counted as too many."""
        out, additions = self.out, self.additions
        kept = [line for line in self.current.values() if line is not None]
        room = max(0, policy.MAX_LINES - len(kept))
        for text in additions[:room]:
            out.changes.append({"op": "add", "old": None, "new": text})
        if len(additions) > room:
            out.dropped["too_many_lines"] += len(additions) - room
        out.lines = kept + additions[:room]
        out.added = min(len(additions), room)
        return out


def build_payload(
    *, lines: list[str], inp: Mapping[str, Any], action_labels: dict[str, str], settings: dict, today, mode: str
) -> dict:
    """Exactly what the model (or the offline rules) receives. Tool results, files and web pages
    are not in it: the selector never reads them (R12)."""
    return {
        "mode": mode,
        "today": today.isoformat(),
        "instructions": {"default": "see system prompt", "team": settings.get("instructions", "")},
        "lines": [{"n": n, "text": text} for n, text in enumerate(lines, start=1)],
        "messages": [
            {
                "id": f"m{m['id']}",
                "at": m["created_at"].isoformat(),
                "day": short_date(m["created_at"], today),
                "text": m["text"],
            }
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


def propose(
    *,
    lines: list[str],
    inp: Mapping[str, Any],
    config: dict,
    now: datetime,
    mode: str = "write",
    engine=None,
    opened=None,
) -> tuple[Outcome, EngineResult]:
    """Ask the engine for operations and pass them through the guards. Saves nothing. `opened`
    (the excluded categories the team's instructions open) defaults to the config's own."""
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
        opened=policy.categories_opened_by(settings.get("instructions", "")) if opened is None else opened,
        review=mode == "review",
    )
    return outcome, result


# --- Which version a chat is read under (R2) ----------------------------------------------------


def stricter_config(chat: dict, published: dict) -> tuple[dict, frozenset[str]]:
    """The configuration a chat's words are read under: the stricter of the version the chat began
    on and the published one. The person was told the older notice and consent, so widening never
    reaches back into what they said before it; narrowing applies at once (Apply is the tool for
    what is already kept). Both instructions go to the model (each narrowing holds), and the
    guards open only the categories both open. Returns (config, opened categories)."""
    mine = published["memorySettings"].get("instructions", "") or ""
    theirs = chat["memorySettings"].get("instructions", "") or ""
    opened_now = policy.categories_opened_by(mine)
    if theirs == mine:
        return published, opened_now
    settings = {**published["memorySettings"], "instructions": "\n".join(x for x in (theirs, mine) if x)}
    return {**published, "memorySettings": settings}, opened_now & policy.categories_opened_by(theirs)


def by_version(inp: Mapping[str, Any]) -> list[tuple[int | None, dict]]:
    """The writer input split by the version each chat began on, in the order they were said."""
    groups: dict = {}
    for key in ("messages", "actions"):
        for item in inp.get(key, []):
            group = groups.setdefault(
                item.get("version_id"), {"messages": [], "actions": [], "replies": [], "first": item["created_at"]}
            )
            group[key].append(item)
            group["first"] = min(group["first"], item["created_at"])
    for reply in inp.get("replies", []):
        if reply.get("version_id") in groups:
            groups[reply["version_id"]]["replies"].append(reply)
    return sorted(groups.items(), key=lambda kv: kv[1]["first"])


def forgotten(line: str, pending: dict | None) -> bool:
    """A line a pending "forget" excludes: one of the lines it removed, or about what it named."""
    if not pending:
        return False
    from memory.store.end_user_requests import lines_about  # the matching rules of the end user's own requests

    if line in pending.get("lines", []):
        return True
    return any(lines_about(subject, [line]) for subject in pending.get("subjects", []))


def propose_read(
    *,
    lines: list[str],
    inp: Mapping[str, Any],
    published: dict,
    versions: dict,
    now: datetime,
    engine=None,
    forget: dict | None = None,
) -> tuple[Outcome, list[EngineResult]]:
    """What a run (or Try) makes of `inp`: each chat read under the stricter of its own version
    (`versions`: id -> config) and `published`, part by part; lines a pending forget excludes are
    dropped (counted as "forgotten"). Saves nothing."""
    before, results, total = list(lines), [], None
    for version_id, group in by_version(inp):
        config, opened = stricter_config(versions.get(version_id) or published, published)
        outcome, result = propose(lines=lines, inp=group, config=config, now=now, engine=engine, opened=opened)
        results.append(result)
        if forget:
            kept = [line for line in outcome.lines if line in before or not forgotten(line, forget)]
            outcome.dropped["forgotten"] += len(outcome.lines) - len(kept)
            outcome.changes = [c for c in outcome.changes if c["new"] is None or c["new"] in kept]
            outcome.lines = kept
        lines = outcome.lines
        if total is None:
            total = outcome
        else:
            total.dropped += outcome.dropped
            total.changes += outcome.changes
        total.lines = lines
    if total is None:
        total = Outcome(before=before, lines=before)
    total.before = before
    counts = _line_counts(before, total.lines)
    total.added, total.replaced, total.removed = counts["added"], counts["replaced"], counts["removed"]
    return total, results


def _line_counts(before: list[str], after: list[str]) -> dict:
    before_set, after_set = set(before), set(after)
    removed = len([line for line in before if line not in after_set])
    added = len([line for line in after if line not in before_set])
    replaced = min(added, removed)
    return {"added": added - replaced, "replaced": replaced, "removed": removed - replaced}


def version_configs(*inputs: Mapping[str, Any]) -> dict:
    """The configs of the versions the chats of `inputs` began on (id -> config), in one read."""
    ids = {item.get("version_id") for inp in inputs for key in ("messages", "actions") for item in inp.get(key, [])}
    ids.discard(None)
    return dict(AgentVersion.objects.filter(pk__in=ids).values_list("pk", "config")) if ids else {}
