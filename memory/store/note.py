"""The note a chat's agent receives (R17): built at conversation start, then kept in step with the
memory by `memory.store.rows.commit_changes` (the next turn of an open chat sees a stop or delete); shown on the Memory tab."""

import functools
import re

from memory.guards import line_refusal
from memory.guards.text import is_said_once
from memory.models import Memory
from memory.store.selectors import memory_of

NOTE_PREAMBLE = (
    "What you remember about this person from earlier chats. It may be incomplete or out of date. "
    'Lines marked "said once" were mentioned only once: lean less on them. '
    "Never rely on a fact being here, and if they correct something, believe them."
)
NOTE_START, NOTE_END = "<memory>", "</memory>"
_NOTE_IN_PROMPT = re.compile(re.escape(NOTE_START) + r"\n(.*?)\n" + re.escape(NOTE_END), re.S)


def render_note(lines: list[str]) -> str:
    """The exact text put in the chat model's system prompt; empty when there is nothing."""
    if not lines:
        return ""
    body = "\n".join(lines)
    return f"{NOTE_PREAMBLE}\n{NOTE_START}\n{body}\n{NOTE_END}"


def note_read(system: str) -> list[tuple[str, bool]]:
    """The lines of the note `render_note` put in a system prompt, each with whether it is firm
    (not marked "said once"): how the offline chat engine reads it (`surfaces.chat.offline`)."""
    match = _NOTE_IN_PROMPT.search(system or "")
    lines = [line for line in match.group(1).split("\n") if line.strip()] if match else []
    return [(line, not is_said_once(line)) for line in lines]


@functools.lru_cache(maxsize=20_000)
def _shown(line: str) -> bool:
    """Whether the policy lets the chat's agent see this line. The policy is pure (the same line
    gets the same answer), so each distinct line is checked once per process, not at every chat."""
    return not line_refusal(line, check_categories=False)


def note_lines(memory: Memory | None) -> list[str]:
    if memory is None or memory.stopped_at is not None:
        return []
    # A line the policy refuses is never shown to the chat's agent.
    return [line for line in memory.lines if _shown(line)]


def memory_at_start(end_user) -> Memory | None:
    """The end user's memory row, read once for a conversation's start: the stopped gate reads it
    and leaves it on this end user instance for the note, which takes it (so nothing later in the
    request can see a stale copy)."""
    if not hasattr(end_user, "_memory_at_start"):
        end_user._memory_at_start = memory_of(end_user)
    return end_user._memory_at_start


def note_at_start(end_user) -> str:
    """The note a new conversation's agent receives: the end user's memory as it is now (R17), from
    the row the stopped gate read (`surfaces.chat.start` hands it to `agents.services.conversation_open`)."""
    memory = memory_at_start(end_user)
    del end_user._memory_at_start
    return render_note(note_lines(memory))
