"""The ports: the only way this lowest app calls up into `consent` and `memory` at run time.

`agents` imports neither app (import-linter checks it). Each port below is a `typing.Protocol`
with the exact signature its callers in `agents` use; `memory` and `consent` fill the slots of
`ports` once, in their `AppConfig.ready()`, through `fill()`. Until then each slot holds a default
that is what a bare `agents` app means: no gate, no note, no consent, memory settings always off.
`tests/agents/test_ports.py` checks that after start-up every port is filled by an implementation
whose parameters (names and kinds) match its Protocol, so a drifted signature fails a test rather
than a chat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agents.models import Agent, Conversation, EndUser


# --- Starting a conversation -----------------------------------------------------------------


class MemoryGate(Protocol):
    """A reason (a Conversation.MemoryOff value) why a new conversation must not use memory, or
    None. `memory` refuses a stopped memory; `consent` refuses without a yes when askFirst is on."""

    def __call__(self, *, agent: Agent, end_user: EndUser, settings: dict, source: str) -> str | None: ...


class MemoryNote(Protocol):
    """The note a new conversation's agent receives: the memory as it is now (R17)."""

    def __call__(self, conversation: Conversation) -> str: ...


class MemoryDueMark(Protocol):
    """A message in a conversation that uses memory: set `conversation.memory_due_at` to when its
    quiet window ends (the caller saves it). `memory.store.due` owns the queue."""

    def __call__(self, conversation: Conversation, now: datetime) -> None: ...


# --- A chat turn -------------------------------------------------------------------------------


class EndUserRequest(Protocol):
    """The reply to an end user's memory request ("stop remembering me", "forget ..."), having
    done what it asks; None when the text is not one (R22)."""

    def __call__(self, conversation: Conversation, text: str, now: datetime | None = None) -> str | None: ...


class NoteRead(Protocol):
    """The lines of the memory note inside a system prompt, each with whether it is firm (not a
    thing said only once): how the offline chat engine reads the note `memory` wrote."""

    def __call__(self, system: str) -> list[tuple[str, bool]]: ...


class OfflineHandler(Protocol):
    """The offline engine's rules for one task: the payload a model would get -> its answer."""

    def __call__(self, payload: dict) -> dict: ...


# --- What a chat surface shows -----------------------------------------------------------------


class EndUserMemoryState(Protocol):
    """{"stopped": bool, "stoppedAt": ISO time or None}: what an end user sees of their memory."""

    def __call__(self, end_user: EndUser) -> dict: ...


class ConsentState(Protocol):
    """{"agreedAt", "declinedAt", "source"}, or None when they never answered (R26)."""

    def __call__(self, end_user: EndUser) -> dict | None: ...


class ConsentRecord(Protocol):
    """Record a yes or no and return the new consent state (R26)."""

    def __call__(self, *, end_user: EndUser, agreed: bool, source: str) -> dict: ...


class NoticeText(Protocol):
    """The privacy notice an end user sees (R27), from an agent's memory settings."""

    def __call__(self, settings: dict, *, agent_name: str = ...) -> str: ...


class CategoryTopics(Protocol):
    """Which consent topics ("sensitive", "emotion") a set of opened memory categories touches:
    `memory` owns the categories, `consent` the guidance that names the topics (R28)."""

    def __call__(self, opened: frozenset[str]) -> frozenset[str]: ...


# --- The agent's configuration and the Build screen --------------------------------------------


class MemorySettingsSchema(Protocol):
    """The `memorySettings` part of an agent's configuration, owned by `memory`: its limits, its
    defaults, its validation (one validator for the form, the Builder and the API) and how a change
    reads. Validated settings always hold `on`, `showSwitch`, `askFirst` and `privacyUrl`, the
    keys the chat surfaces of this app read."""

    QUIET_MINUTES_CHOICES: tuple[int, ...]
    KEEP_FOR_DAYS_MIN: int
    KEEP_FOR_DAYS_MAX: int
    MAX_INSTRUCTIONS_CHARS: int
    MAX_PRIVACY_URL_CHARS: int

    def default(self) -> dict[str, Any]: ...

    def validate(self, settings: Any) -> dict[str, Any]: ...

    def describe_changes(self, old: dict[str, Any], new: dict[str, Any]) -> list[str]: ...


class PublishWarnings(Protocol):
    """What publishing this configuration would put live that deserves a second look (R13, R28)."""

    def __call__(self, config: dict) -> list[str]: ...


class Builder(Protocol):
    """The Builder (R1, R2): a team member's plain words become a change to the draft's memory
    settings, and a reply saying what changed: {"reply", "changes", "draft"}."""

    MAX_MESSAGE_CHARS: int

    def builder_message(self, *, agent: Agent, message: str, user: Any = None) -> dict: ...


# --- The defaults of a bare `agents` app --------------------------------------------------------


def _no_note(conversation: Conversation) -> str:
    return ""


def _no_due_mark(conversation: Conversation, now: datetime) -> None:
    return None


def _no_request(conversation: Conversation, text: str, now: datetime | None = None) -> str | None:
    return None


def _no_note_lines(system: str) -> list[tuple[str, bool]]:
    return []


def _never_stopped(end_user: EndUser) -> dict:
    return {"stopped": False, "stoppedAt": None}


def _never_answered(end_user: EndUser) -> dict | None:
    return None


def _no_consent_record(*, end_user: EndUser, agreed: bool, source: str) -> dict:
    from agents.errors import AppError

    raise AppError("consent_unavailable", "This installation does not record consent.", status=404)


def _no_notice(settings: dict, *, agent_name: str = "This assistant") -> str:
    return ""


def _no_topics(opened: frozenset[str]) -> frozenset[str]:
    return frozenset()


class _MemoryAlwaysOff:
    """Without `memory`, memory is off and cannot be turned on."""

    QUIET_MINUTES_CHOICES = (30,)
    KEEP_FOR_DAYS_MIN = KEEP_FOR_DAYS_MAX = 90
    MAX_INSTRUCTIONS_CHARS = 0
    MAX_PRIVACY_URL_CHARS = 0

    def default(self) -> dict[str, Any]:
        return {"on": False, "showSwitch": False, "askFirst": False, "privacyUrl": ""}

    def validate(self, settings: Any) -> dict[str, Any]:
        from agents.errors import InvalidConfig

        if not isinstance(settings, dict) or any(
            settings.get(key) for key in ("on", "showSwitch", "askFirst", "privacyUrl")
        ):
            raise InvalidConfig("This installation has no memory.", field="memorySettings")
        return self.default()

    def describe_changes(self, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
        return []


def _no_warnings(config: dict) -> list[str]:
    return []


class _NoBuilder:
    MAX_MESSAGE_CHARS = 2000

    def builder_message(self, *, agent: Agent, message: str, user: Any = None) -> dict:
        from agents.errors import AppError

        raise AppError("builder_unavailable", "This installation has no Builder.", status=404)


# --- The slots ------------------------------------------------------------------------------------


@dataclass
class Ports:
    memory_gates: list[MemoryGate] = field(
        default_factory=list
    )  # consent (ask first), then memory (stopped): app order
    memory_note: MemoryNote = _no_note  # memory
    memory_due_mark: MemoryDueMark = _no_due_mark  # memory
    end_user_request: EndUserRequest = _no_request  # memory
    note_read: NoteRead = _no_note_lines  # memory
    end_user_memory_state: EndUserMemoryState = _never_stopped  # memory
    category_topics: CategoryTopics = _no_topics  # memory
    memory_settings: MemorySettingsSchema = field(default_factory=_MemoryAlwaysOff)  # memory
    publish_warnings: PublishWarnings = _no_warnings  # memory
    builder: Builder = field(default_factory=_NoBuilder)  # memory
    consent_state: ConsentState = _never_answered  # consent
    consent_record: ConsentRecord = _no_consent_record  # consent
    notice_text: NoticeText = _no_notice  # consent
    notice_line: str = ""  # consent: the line under the message box while memory is used
    # The offline engine's rules by task name; each app registers its own tasks.
    offline_handlers: dict[str, OfflineHandler] = field(default_factory=dict)
    # The error codes the API answers beyond agents' own: code -> (status, when). Filled by each app.
    error_codes: dict[str, tuple[int, str]] = field(default_factory=dict)


ports = Ports()
_filled: set[str] = set()


def fill(**implementations: Any) -> None:
    """Fill ports by name, once: the app that owns a port calls this in its `ready()`. A port
    filled twice with a different implementation is a wiring mistake and raises."""
    for name, implementation in implementations.items():
        if name not in Ports.__dataclass_fields__ or name in ("memory_gates", "offline_handlers", "error_codes"):
            raise TypeError(f"{name!r} is not a single port (gates, handlers and codes have their own adders)")
        if name in _filled and getattr(ports, name) is not implementation:
            raise RuntimeError(f"The port {name!r} is already filled")
        setattr(ports, name, implementation)
        _filled.add(name)


def filled() -> frozenset[str]:
    """The names of the single ports an app has filled (for the wiring test)."""
    return frozenset(_filled)


def add_memory_gate(gate: MemoryGate) -> None:
    if gate not in ports.memory_gates:
        ports.memory_gates.append(gate)


def add_offline_handler(task: str, handler: OfflineHandler) -> None:
    if ports.offline_handlers.setdefault(task, handler) is not handler:
        raise RuntimeError(f"The offline task {task!r} already has rules")


def add_error_codes(codes: dict[str, tuple[int, str]]) -> None:
    for code, entry in codes.items():
        if ports.error_codes.setdefault(code, entry) != entry:
            raise RuntimeError(f"The error code {code!r} is already described differently")
