"""Extension points that let this lowest layer call up into `consent` and `memory` at run time.

`agents` imports neither app. They fill these slots in their `AppConfig.ready()`; until then
the defaults below apply (no gate, no note), which is what a bare `agents` app means.
"""
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Registry:
    # (agent, end_user, memory_settings, source, visitor_switch_on) -> a Conversation.MemoryOff
    # reason, or None. Filled by `memory` (stopped) and `consent` (ask first).
    memory_gates: list[Callable[..., str | None]] = field(default_factory=list)
    # (conversation) -> the note a chat's agent receives. Filled by `memory`.
    memory_note: Callable[[Any], str] | None = None
    # (conversation, now) -> sets conversation.memory_due_at: when its quiet window ends (the
    # caller saves it). Filled by `memory` (memory.due owns the due queue).
    memory_due_mark: Callable[[Any, Any], None] | None = None
    # (conversation, text) -> a reply string when the text is an end-user memory request
    # ("stop remembering me", "forget ..."), else None. Filled by `memory`.
    end_user_request: Callable[[Any, str], str | None] | None = None
    # Offline engine handlers by task name: (payload) -> dict. Filled by each app's ready().
    offline_handlers: dict[str, Callable[[dict], dict]] = field(default_factory=dict)


registry = Registry()
