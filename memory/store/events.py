"""What the memory's actions say they did (memory.store.actions): one event per committed change,
sent by the action itself, so listeners react to what happened and never guess it from which
columns a save wrote (Zulip's `send_event_on_commit`).

- `memory_changed` is sent inside the change's transaction, right after its write, for listeners
  whose own writes stand or fall with it: the webhook outbox (its delivery rows commit or roll
  back with the change) and the operator's counters and log line of each audit row (as the audit
  row's own save announced them before).
- `memory_committed` carries the same event once the transaction has committed, and never for a
  change that rolled back: for anything that acts outside the database.
- `end_user_erased` is sent by `end_user_erase`, inside its transaction.

The events hold ids, times and counts: never a memory's words."""

from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Literal

from django.db import transaction
from django.dispatch import Signal

Kind = Literal[
    "set",  # the whole memory written (the Memory tab, the API)
    "edited",  # one line added, corrected or deleted
    "deleted",  # emptied, with a new horizon
    "stopped",  # they asked to stop: emptied, with a new horizon
    "resumed",  # a stop undone: remembered again from now
    "forgotten",  # their own "forget that ...": lines removed, the chats before it read without them
    "read_past",  # the writer read past a pending forget and let it go
    "expired",  # retention emptied it, with a new horizon
    "run",  # a quiet-window run read their chats (and maybe changed lines)
    "run_failed",  # a quiet-window run failed: retried later
    "applied",  # Apply reviewed it and changed lines
    "apply_failed",  # Apply's review of it failed
]


@dataclass(frozen=True)
class LineCounts:
    """How the lines changed: a line that took the place of another is replaced, not one added and
    one removed."""

    added: int = 0
    replaced: int = 0
    removed: int = 0

    @classmethod
    def between(cls, before: list[str], after: list[str]) -> "LineCounts":
        before_set, after_set = set(before), set(after)
        removed = len([line for line in before if line not in after_set])
        added = len([line for line in after if line not in before_set])
        replaced = min(added, removed)
        return cls(added=added - replaced, replaced=replaced, removed=removed - replaced)

    def any(self) -> bool:
        return bool(self.added or self.replaced or self.removed)

    def as_dict(self) -> dict[str, int]:
        return {"added": self.added, "replaced": self.replaced, "removed": self.removed}


@dataclass(frozen=True)
class RunSummary:
    """The audit row a change wrote (`MemoryRun`), as the counters and the log line read it."""

    kind: str  # MemoryRun.Kind: who or what made the change
    status: str  # MemoryRun.Status
    error: str = ""
    duration_ms: int = 0
    counts: LineCounts = LineCounts()
    dropped: dict[str, int] = field(default_factory=dict)  # guard reason -> lines dropped


@dataclass(frozen=True)
class MemoryChanged:
    """One committed change of one memory."""

    kind: Kind
    agent_id: int
    end_user_id: int
    at: datetime  # the memory's updatedAt after the change (no other memory of the agent holds it)
    lines: int  # how many lines it holds now
    text_changed: bool  # its words changed (a set to the same text, or a run that kept every line: False)
    was_stopped: bool  # it was stopped before the change
    stopped_at: datetime | None  # when it was stopped, if it is now
    counts: LineCounts = LineCounts()
    run: RunSummary | None = None  # the audit row the change wrote, if any


memory_changed = Signal()  # event=MemoryChanged, inside the change's transaction
memory_committed = Signal()  # event=MemoryChanged, once that transaction has committed

# sender=EndUser; agent (the Agent), external_id (str), removed (the counts end_user_erase answers).
end_user_erased = Signal()


def publish(event: MemoryChanged) -> None:
    """Say what a change did: now, to the listeners inside its transaction, then once it commits."""
    memory_changed.send(sender=MemoryChanged, event=event)
    transaction.on_commit(partial(memory_committed.send, sender=MemoryChanged, event=event), robust=True)
