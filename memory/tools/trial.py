"""Try on past conversations (R18): what the draft settings would make of the newest few end
users' memories. It saves nothing: no memory, no `read_up_to`, no run row, no usage, no task.

Try is the writer with the draft instructions, nothing else: for each person it reviews today's
memory against the draft (what Apply would take out once the draft is published), then reads what
the next quiet-window runs would read (`writer.unread_parts`: from `read_up_to`, a pending forget
with its exclusion, never into a chat still active unless asked) through the same proposal and
guards (`writer.propose_read`, each chat under the stricter of its own version and the draft). So
nothing a run has read is read again: a line the team corrected or deleted, or a deleted memory,
never comes back in a preview, exactly as it never comes back after a real run. Only
conversations that used memory are read (the writer's own selector).

The engine calls for different people are in flight together with a model (`engines.concurrently`,
up to MODEL_CONCURRENCY at once; the offline engine's one after another); those calls never touch
the database (everything they need is read first).
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict

from django.db.models import Exists, OuterRef
from django.utils import timezone

from agents.engines import EngineError, concurrently, get_engine
from agents.errors import AppError
from agents.models import Agent, Conversation, EndUser, Message
from memory.models import Memory
from memory.store.selectors import WriterInput, memories_of
from memory.writer.operations import version_configs
from memory.writer.run import unread_parts

DEFAULT_PEOPLE, MAX_PEOPLE = 5, 20
MAX_PARTS = 5  # at most this many writer parts (of up to 200 messages each) per person


@dataclass
class TrialRow:
    status: str  # "same", "replaced", "removed", "added"
    old: str | None
    new: str | None


@dataclass
class TrialPerson:
    end_user: EndUser
    before: list[str]
    after: list[str] = field(default_factory=list)
    rows: list[TrialRow] = field(default_factory=list)
    added: int = 0
    replaced: int = 0
    removed: int = 0
    messages_read: int = 0
    actions_read: int = 0
    began_at: datetime | None = None  # where the read began: their memory's read_up_to (None: their first chat)
    more_unread: bool = False
    open_chats: int = 0  # chats still inside their quiet window, left unread (0 when included)
    error: str = ""

    @property
    def changed(self) -> bool:
        return self.after != self.before


@dataclass
class TrialResult:
    people: list[TrialPerson]
    asked_for: int
    engine: str

    @property
    def changed(self) -> int:
        return sum(1 for p in self.people if p.changed and not p.error)


def parse_people(raw) -> int:
    """How many end users to try: default 5, at most 20; anything else is a clear error."""
    if raw in (None, ""):
        return DEFAULT_PEOPLE
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_PEOPLE:
        raise AppError("invalid_people", f"Try runs on 1 to {MAX_PEOPLE} end users.", field="n")
    return value


def trial_candidates(agent: Agent, limit: int) -> list[EndUser]:
    """The newest end users (by their last chat) with a chat that used memory, not stopped."""
    used_memory = Conversation.objects.filter(end_user=OuterRef("pk"), uses_memory=True)
    stopped = Memory.objects.filter(end_user=OuterRef("pk"), stopped_at__isnull=False)
    return list(
        EndUser.objects.filter(agent=agent)
        .filter(Exists(used_memory))
        .exclude(Exists(stopped))
        .order_by("-last_chat_at", "-id")[:limit]
    )


def open_chats(end_user: EndUser, began: datetime | None, now: datetime) -> int:
    """How many of their chats are still inside the quiet window with something said after
    `began` (what their memory has read): a run would not read those yet (R11), so Try leaves them
    out unless asked."""
    from memory.store.due import active_conversations

    active = active_conversations(end_user.pk, now)
    if not active:
        return 0
    said = Message.objects.filter(conversation_id__in=active)
    if began is not None:
        said = said.filter(created_at__gt=began)
    return len(set(said.values_list("conversation_id", flat=True)))


class _Entry(TypedDict):
    old: str | None
    new: str | None
    status: str  # as TrialRow.status


class _Tracker:
    """Follows each of today's lines through the operations, to show what became of it."""

    def __init__(self, lines: list[str]):
        self.entries: list[_Entry] = [{"old": line, "new": line, "status": "same"} for line in lines]

    def _find(self, text):
        for entry in self.entries:
            if entry["new"] == text and entry["status"] != "removed":
                return entry
        return None

    def apply(self, changes: list[dict]) -> None:
        for change in changes:
            if change["op"] == "add":
                self.entries.append({"old": None, "new": change["new"], "status": "added"})
                continue
            entry = self._find(change["old"])
            if entry is None:
                continue
            if change["op"] == "remove":
                if entry["status"] == "added":
                    self.entries.remove(entry)
                else:
                    entry["status"], entry["new"] = "removed", None
            elif change["op"] == "replace":
                entry["new"] = change["new"]
                if entry["status"] == "same":
                    entry["status"] = "replaced"

    def rows(self) -> list[TrialRow]:
        rows = []
        for entry in self.entries:
            status = entry["status"]
            if status == "replaced" and entry["new"] == entry["old"]:
                status = "same"
            rows.append(TrialRow(status, entry["old"], entry["new"]))
        return rows


def _run_person(
    person: TrialPerson,
    parts: list[tuple[WriterInput, dict | None]],
    versions: dict,
    config: dict,
    now: datetime,
    engine,
) -> TrialPerson:
    """Engine calls only: no database access here (this runs in a worker thread)."""
    tracker = _Tracker(person.before)
    try:
        from memory.writer.operations import propose, propose_read

        outcome, _ = propose(
            lines=person.before,
            inp={"messages": [], "actions": [], "replies": []},
            config=config,
            now=now,
            mode="review",
            engine=engine,
        )
        tracker.apply(outcome.changes)
        lines = outcome.lines
        for inp, forget in parts:
            # Each chat under the stricter of its own version and the draft, as a run would (R2).
            outcome, _ = propose_read(
                lines=lines, inp=inp, published=config, versions=versions, now=now, engine=engine, forget=forget
            )
            tracker.apply(outcome.changes)
            lines = outcome.lines
    except EngineError as exc:
        person.error = exc.message
        person.after = list(person.before)
        return person
    person.after = lines
    person.rows = tracker.rows()
    person.added = sum(1 for r in person.rows if r.status == "added")
    person.replaced = sum(1 for r in person.rows if r.status == "replaced")
    person.removed = sum(1 for r in person.rows if r.status == "removed")
    return person


def trial_run(
    *,
    agent: Agent,
    config: dict,
    people: int = DEFAULT_PEOPLE,
    now: datetime | None = None,
    engine=None,
    end_users: list[EndUser] | None = None,
    include_open: bool = False,
) -> TrialResult:
    """Run the writer with `config` (the draft) on the newest `people` end users (or on `end_users`,
    picked earlier: the Try job goes person by person). Saves nothing. Chats still inside their
    quiet window are left unread, as a run would, and counted (`open_chats`); `include_open` reads
    them too."""
    if not agent.team.has_memory:
        raise AppError("plan_required", "Memory comes with the Team plan and up.", status=403)
    if not 1 <= people <= MAX_PEOPLE:
        raise AppError("invalid_people", f"Try runs on 1 to {MAX_PEOPLE} end users.", field="n")
    now = now or timezone.now()
    engine = engine or get_engine()
    candidates = trial_candidates(agent, people) if end_users is None else end_users
    memories = memories_of(candidates)
    work = []
    for end_user in candidates:
        memory = memories.get(end_user.pk)
        read_from = memory.read_up_to if memory else None
        skipped = 0 if include_open else open_chats(end_user, read_from, now)
        parts, more = unread_parts(
            memory=memory, end_user=end_user, now=now, include_open=include_open, limit=MAX_PARTS
        )
        person = TrialPerson(
            end_user=end_user,
            before=memory.lines if memory else [],
            began_at=read_from,
            messages_read=sum(len(inp["messages"]) for inp, _ in parts),
            actions_read=sum(len(inp["actions"]) for inp, _ in parts),
            more_unread=more,
            open_chats=skipped,
        )
        versions = version_configs(*(inp for inp, _ in parts))
        work.append((person, parts, versions))
    if not work:
        return TrialResult(people=[], asked_for=people, engine=engine.name)
    done = concurrently(engine, lambda item: _run_person(item[0], item[1], item[2], config, now, engine), work)
    return TrialResult(people=done, asked_for=people, engine=engine.name)
