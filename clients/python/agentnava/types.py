"""What the API answers, as frozen dataclasses whose fields are the API's own in snake_case
(`endUserId` is `end_user_id`). Times are timezone-aware `datetime`s. A field the server did not
send is None; a field it sends that this version does not know is ignored, so an older client
keeps working against a newer server.

`from_api(Memory, data)` builds one from the API's JSON; the clients do it for every call."""

from __future__ import annotations

import dataclasses
import functools
import re
import types
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal, TypedDict, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")


# --- Input -------------------------------------------------------------------------------------


class MemorySettingsInput(TypedDict, total=False):
    """`memory_settings` for `agent.update()` and `create_agent()`: only the settings to change.
    (camelCase keys, as the JavaScript client takes them, work too.)"""

    on: bool
    instructions: str
    keep_for_days: int
    quiet_minutes: Literal[5, 15, 30, 60]
    show_switch: bool
    ask_first: bool
    privacy_url: str


class ActionInput(TypedDict, total=False):
    """One action the agent can run: `name` (required) and the `label` of its dated line."""

    name: str
    label: str


# --- The agent ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Action:
    name: str
    label: str


@dataclasses.dataclass(frozen=True)
class MemorySettings:
    on: bool
    instructions: str
    keep_for_days: int
    quiet_minutes: int
    show_switch: bool
    ask_first: bool
    privacy_url: str
    #: The notice to show near the message box of a chat you draw; None while memory is off.
    #: (Only on the agent itself, not on a version's configuration.)
    notice: str | None = None


@dataclasses.dataclass(frozen=True)
class Agent:
    id: str
    name: str
    version: int
    published_at: datetime
    instructions: str
    guardrails: str
    actions: list[Action]
    memory_settings: MemorySettings
    #: Only in `client.agents()` and `create_agent()`.
    created_at: datetime | None = None


@dataclasses.dataclass(frozen=True)
class Config:
    """A version's configuration (or the Builder's draft)."""

    instructions: str
    guardrails: str
    actions: list[Action]
    memory_settings: MemorySettings


@dataclasses.dataclass(frozen=True)
class Version:
    number: int
    published_at: datetime
    source: str
    config: Config


@dataclasses.dataclass(frozen=True)
class BuilderReply:
    reply: str
    changes: list[str]
    draft: Config | None


# --- Pages -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PageNext:
    """Where the next page starts: pass `before` (the last row's time) or `cursor` (exact)."""

    before: datetime
    cursor: str


@dataclasses.dataclass(frozen=True)
class VersionPageNext:
    before: int


@dataclasses.dataclass(frozen=True)
class AgentPage:
    agents: list[Agent]
    next: PageNext | None

    def __iter__(self) -> Iterator[Agent]:
        return iter(self.agents)


@dataclasses.dataclass(frozen=True)
class VersionPage:
    versions: list[Version]
    next: VersionPageNext | None

    def __iter__(self) -> Iterator[Version]:
        return iter(self.versions)


# --- Memory and end users ----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LastRun:
    """What the last update after a chat did, as counts (none of their words)."""

    at: datetime
    added: int
    replaced: int
    removed: int


@dataclasses.dataclass(frozen=True)
class Memory:
    end_user_id: str
    #: One fact per line: what the agent reads.
    text: str
    stopped: bool
    updated_at: datetime | None
    read_up_to: datetime | None
    last_run: LastRun | None
    stopped_at: datetime | None
    agreed_at: datetime | None
    last_chat_at: datetime | None
    conversations: int
    #: The version this answer shows (the `ETag` header, not part of the JSON): pass the memory to
    #: `memory.set(text, memory=...)` or `memory.delete(memory=...)` for a compare-and-set.
    etag: str | None = dataclasses.field(default=None, metadata={"api": None})


@dataclasses.dataclass(frozen=True)
class MemoryPage:
    memories: list[Memory]
    next: PageNext | None

    def __iter__(self) -> Iterator[Memory]:
        return iter(self.memories)


@dataclasses.dataclass(frozen=True)
class EndUser:
    """Someone an agent has met, with or without a memory."""

    end_user_id: str
    first_seen_at: datetime
    has_memory: bool
    text: str
    stopped: bool
    updated_at: datetime | None
    read_up_to: datetime | None
    last_run: LastRun | None
    stopped_at: datetime | None
    agreed_at: datetime | None
    last_chat_at: datetime | None
    conversations: int


@dataclasses.dataclass(frozen=True)
class EndUserPage:
    end_users: list[EndUser]
    next: PageNext | None

    def __iter__(self) -> Iterator[EndUser]:
        return iter(self.end_users)


@dataclasses.dataclass(frozen=True)
class Consent:
    end_user_id: str
    agreed: bool
    agreed_at: datetime | None


@dataclasses.dataclass(frozen=True)
class Erased:
    """What `end_user.erase()` removed on that agent, counted per kind."""

    end_user_id: str
    memories: int
    lines: int
    memory_runs: int
    conversations: int
    messages: int
    actions: int
    consents: int
    end_users: int


@dataclasses.dataclass(frozen=True)
class ErasedOnAgent:
    agent_id: str
    name: str
    #: Counts per kind, as the API names them (conversations, messages, actions, consents, endUsers, lines).
    removed: dict[str, int]


@dataclasses.dataclass(frozen=True)
class TeamErase:
    """What `client.end_user(id).erase()` removed, per agent of the team."""

    end_user_id: str
    agents: list[ErasedOnAgent]


# --- Conversations -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Conversation:
    id: str
    agent_id: str
    end_user_id: str
    uses_memory: bool
    #: Why memory is not used ('requested', 'settings', 'plan', 'project', 'stopped', 'consent', 'switch'); None when it is.
    memory_off_reason: str | None
    version: int
    project: str | None
    started_at: datetime


@dataclasses.dataclass(frozen=True)
class ConversationSummary(Conversation):
    last_activity_at: datetime


@dataclasses.dataclass(frozen=True)
class Message:
    #: 'user' (the person) or 'agent' (the reply).
    role: str
    text: str
    at: datetime


@dataclasses.dataclass(frozen=True)
class RecordedAction:
    name: str
    status: str
    at: datetime


@dataclasses.dataclass(frozen=True)
class RecordedEvent:
    type: str
    text: str
    at: datetime


@dataclasses.dataclass(frozen=True)
class ConversationDetail(ConversationSummary):
    messages: list[Message]
    actions: list[RecordedAction]
    events: list[RecordedEvent]


@dataclasses.dataclass(frozen=True)
class ConversationPage:
    conversations: list[ConversationSummary]
    next: PageNext | None

    def __iter__(self) -> Iterator[ConversationSummary]:
        return iter(self.conversations)


@dataclasses.dataclass(frozen=True)
class Reply:
    conversation_id: str
    reply: str
    #: Whether the message was a request about their memory ("stop remembering me", "forget ...").
    handled_as_request: bool
    sent_at: datetime


@dataclasses.dataclass(frozen=True)
class EventReceipt:
    """What `conversation.record(...)` answers."""

    conversation_id: str
    type: str
    recorded_at: datetime


# --- Export ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ExportAgent:
    id: str
    name: str


@dataclasses.dataclass(frozen=True)
class MemoryRun:
    kind: str
    status: str
    at: datetime
    added: int
    replaced: int
    removed: int
    messages_read: int
    actions_read: int


@dataclasses.dataclass(frozen=True)
class ExportConsent:
    agreed_at: datetime | None
    declined_at: datetime | None
    source: str
    updated_at: datetime


@dataclasses.dataclass(frozen=True)
class Export:
    """Everything kept about one person on one agent: an access request's answer."""

    exported_at: datetime
    agent: ExportAgent
    end_user: EndUser
    memory_runs: list[MemoryRun]
    consent: ExportConsent | None
    conversations: list[ConversationDetail]


# --- Try, Apply and the instruction check ------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TryRow:
    status: str
    old: str | None
    new: str | None


@dataclasses.dataclass(frozen=True)
class TryPerson:
    end_user_id: str
    changed: bool
    added: int
    replaced: int
    removed: int
    messages_read: int
    actions_read: int
    more_unread: bool
    open_chats: int
    error: str
    rows: list[TryRow]


@dataclasses.dataclass(frozen=True)
class TryJob:
    id: int
    #: 'queued', 'running', then 'done', 'cancelled' or 'failed'.
    status: str
    draft: bool
    people: int
    done: int
    cancel_requested: bool
    error: str
    created_at: datetime
    finished_at: datetime | None
    results: list[TryPerson]


@dataclasses.dataclass(frozen=True)
class ApplyJob:
    id: int
    status: str
    version: int
    total: int
    reviewed: int
    changed: int
    replaced: int
    removed: int
    failed: int
    cancel_requested: bool
    error: str
    created_at: datetime
    finished_at: datetime | None


@dataclasses.dataclass(frozen=True)
class OpenedCategory:
    code: str
    label: str
    clause: str


@dataclasses.dataclass(frozen=True)
class Guidance:
    where: str
    look_at: str
    meaning: str


@dataclasses.dataclass(frozen=True)
class InstructionCheck:
    opened: list[OpenedCategory]
    decisions: list[str]
    recommend_ask_first: bool
    guidance: list[Guidance]


# --- The team: audit log and webhooks ----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class AuditEvent:
    id: str
    action: str
    actor: str
    api_key_prefix: str | None
    target: str
    detail: dict[str, Any]
    created_at: datetime


@dataclasses.dataclass(frozen=True)
class AuditPage:
    events: list[AuditEvent]
    next: PageNext | None

    def __iter__(self) -> Iterator[AuditEvent]:
        return iter(self.events)


@dataclasses.dataclass(frozen=True)
class Webhook:
    id: str
    url: str
    events: list[str]
    agent_id: str | None
    include_text: bool
    active: bool
    created_at: datetime
    last_status: str
    last_delivery_at: datetime | None


@dataclasses.dataclass(frozen=True)
class WebhookWithSecret(Webhook):
    """An endpoint as created (or with a rotated secret): `secret` is shown this once."""

    secret: str


@dataclasses.dataclass(frozen=True)
class Delivery:
    id: str
    event: str
    status: str
    attempts: int
    created_at: datetime
    last_attempt_at: datetime | None
    next_attempt_at: datetime | None
    last_response_class: str
    last_error: str


@dataclasses.dataclass(frozen=True)
class WebhookDetail(Webhook):
    deliveries: list[Delivery]


# --- From the API's JSON -----------------------------------------------------------------------

_CAMEL_BOUNDARY = re.compile(r"_([a-z0-9])")


def api_name(name: str) -> str:
    """A Python name in the API's camelCase: keep_for_days -> keepForDays (camelCase stays as it is)."""
    return _CAMEL_BOUNDARY.sub(lambda match: match.group(1).upper(), name)


def parse_datetime(value: str) -> datetime:
    """An ISO 8601 time from the API ('Z' included, which Python 3.10's fromisoformat does not read)."""
    return datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def fields_from_api(cls: type, data: Any) -> dict[str, Any]:
    """The keyword arguments of dataclass `cls` read from the API's JSON object `data`."""
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        if not field.init or field.name.startswith("_"):
            continue
        key = field.metadata.get("api", api_name(field.name))
        if key is None:
            continue
        if isinstance(data, dict) and key in data:
            kwargs[field.name] = _convert(hints[field.name], data[key])
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            kwargs[field.name] = None
    return kwargs


def from_api(cls: type[T], data: Any, **extra: Any) -> T:
    """An instance of dataclass `cls` from the API's JSON, with `extra` fields beside."""
    return cls(**fields_from_api(cls, data), **extra)


def _convert(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        arms = [arm for arm in get_args(hint) if arm is not type(None)]
        return _convert(arms[0], value) if len(arms) == 1 else value
    if origin is list:
        (item,) = get_args(hint)
        return [_convert(item, one) for one in value]
    if origin is dict:
        return dict(value)
    if hint is datetime:
        return parse_datetime(value) if isinstance(value, str) else value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return from_api(hint, value)
    return value
