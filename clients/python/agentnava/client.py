"""The synchronous client: `AgentNava(api_key=..., base_url=...)`, on httpx.

    from agentnava import AgentNava

    agent = AgentNava(api_key="ank_...", base_url="http://127.0.0.1:8000").agent("agt_493fb4f0cf13")
    agent.update(memory_settings={"on": True, "quiet_minutes": 15})
    ananya = agent.end_user("u_ananya")
    ananya.memory.set("Prefers email over phone.")
    memory = ananya.memory.get()

`async_client.py` is the same surface with `await` (`AsyncAgentNava`)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Any

import httpx

from agentnava import types as t
from agentnava._core import NO_BODY, Core, body_of, camel_keys, query, segment
from agentnava.types import from_api
from agentnava.webhooks import verify_signature

__all__ = [
    "AgentClient",
    "AgentNava",
    "ApplyJobClient",
    "ConversationClient",
    "EndUserClient",
    "MemoryClient",
    "StartedConversation",
    "TeamEndUserClient",
    "TryJobClient",
    "WebhooksClient",
]

Before = datetime | str | None


class AgentNava:
    """A team's API key on one AgentNava server.

    `api_key` and `base_url` default to the environment's AGENTNAVA_API_KEY and AGENTNAVA_BASE_URL
    (`base_url` with or without /api/v1). Writes carry a new Idempotency-Key each (pass
    `idempotency_key=` to a call to choose it); `max_retries` tries again after a dropped connection,
    429 or 5xx where that is safe (see `agentnava._core`). `http_client` is an `httpx.Client` of yours
    (proxies, certificates); this client then leaves closing it to you."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 2,
        idempotency_keys: bool = True,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._core = Core(
            api_key=api_key, base_url=base_url, max_retries=max_retries, idempotency_keys=idempotency_keys
        )
        self._http = http_client if http_client is not None else httpx.Client(timeout=timeout)
        self._owns_http = http_client is None

    @property
    def base_url(self) -> str:
        return self._core.base_url

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> AgentNava:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- The team -------------------------------------------------------------------------------

    def agent(self, agent_id: str) -> AgentClient:
        """One agent, with the document's calls: get, update, memories, start, end_user."""
        return AgentClient(self, agent_id)

    def agents(self, *, limit: int | None = None, before: Before = None, cursor: str | None = None) -> t.AgentPage:
        """The team's agents, newest first."""
        return from_api(t.AgentPage, self._call("GET", "/agents" + query(limit=limit, before=before, cursor=cursor)))

    def iter_agents(self, *, limit: int | None = None) -> Iterator[t.Agent]:
        """Every agent of the team, page after page."""
        cursor = None
        while True:
            page = self.agents(limit=limit, cursor=cursor)
            yield from page.agents
            if page.next is None:
                return
            cursor = page.next.cursor

    def create_agent(
        self,
        name: str,
        *,
        instructions: str | None = None,
        guardrails: str | None = None,
        actions: Sequence[t.ActionInput] | None = None,
        memory_settings: t.MemorySettingsInput | Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> t.Agent:
        """A new agent, its configuration published as version 1 (memory off unless turned on)."""
        body = agent_body(
            instructions=instructions, guardrails=guardrails, actions=actions, memory_settings=memory_settings
        )
        answer = self._call("POST", "/agents", {"name": name, **body}, idempotency_key=idempotency_key)
        return from_api(t.Agent, answer)

    def end_user(self, end_user_id: str) -> TeamEndUserClient:
        """One person across the team's agents: `erase()` removes them on every agent."""
        return TeamEndUserClient(self, end_user_id)

    def conversation(self, conversation_id: str) -> ConversationClient:
        """A conversation you already started (after a restart, say), by its id."""
        return ConversationClient(id=conversation_id, _api=self)

    def audit_log(self, *, limit: int | None = None, before: Before = None, cursor: str | None = None) -> t.AuditPage:
        """Who did what to the team's access, newest first (an owner's or admin's key)."""
        answer = self._call("GET", "/audit-log" + query(limit=limit, before=before, cursor=cursor))
        return from_api(t.AuditPage, answer)

    def iter_audit_log(self, *, limit: int | None = None) -> Iterator[t.AuditEvent]:
        cursor = None
        while True:
            page = self.audit_log(limit=limit, cursor=cursor)
            yield from page.events
            if page.next is None:
                return
            cursor = page.next.cursor

    @property
    def webhooks(self) -> WebhooksClient:
        """The team's webhook endpoints."""
        return WebhooksClient(self, None)

    verify_signature = staticmethod(verify_signature)

    # --- Any call -------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        headers: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> Any:
        """Any API call, e.g. request("GET", "/agents/agt_1/versions"): the answer's JSON (None for 204).
        `path` is under /api/v1; `body` (JSON) is sent when it is not None. Raises AgentNavaError."""
        return self._call(
            method, path, NO_BODY if body is None else body, headers=headers, idempotency_key=idempotency_key
        )

    def _call(
        self,
        method: str,
        path: str,
        body: Any = NO_BODY,
        *,
        headers: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> Any:
        return self._send(method, path, body, headers=headers, idempotency_key=idempotency_key)[0]

    def _send(
        self,
        method: str,
        path: str,
        body: Any = NO_BODY,
        *,
        headers: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[Any, httpx.Response]:
        """Send, trying again where that is safe, and answer (the JSON, the response)."""
        prepared = self._core.prepare(method, path, body, headers=headers, idempotency_key=idempotency_key)
        attempt = 0
        while True:
            try:
                response = self._http.request(
                    prepared.method, prepared.url, headers=prepared.headers, content=prepared.content
                )
            except httpx.TransportError as exc:
                wait = self._core.wait_after_failure(prepared, attempt)
                if wait is None:
                    raise self._core.no_answer(prepared, exc) from exc
            else:
                wait = self._core.wait_after_answer(prepared, response, attempt)
                if wait is None:
                    return self._core.result(response), response
            attempt += 1
            time.sleep(wait)

    def _memory(self, method: str, path: str, body: Any = NO_BODY, made_on: t.Memory | str | None = None) -> Any:
        headers = if_match(made_on)
        payload, response = self._send(method, path, body, headers=headers)
        if payload is None:
            return None
        return from_api(t.Memory, payload, etag=response.headers.get("ETag"))


def agent_body(
    *,
    instructions: str | None,
    guardrails: str | None,
    actions: Sequence[t.ActionInput] | None,
    memory_settings: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """An agent's configuration as the API takes it (memory_settings' keys in camelCase)."""
    return body_of(
        instructions=instructions,
        guardrails=guardrails,
        actions=[dict(action) for action in actions] if actions is not None else None,
        memory_settings=camel_keys(memory_settings) if memory_settings is not None else None,
    )


def if_match(made_on: t.Memory | str | None) -> dict[str, str]:
    """The If-Match header of a write made on a memory read (its etag), or none."""
    if made_on is None:
        return {}
    tag = made_on if isinstance(made_on, str) else made_on.etag
    if not tag:
        raise TypeError("Pass the memory as get() or set() answered it (it carries its etag).")
    return {"If-Match": tag}


class AgentClient:
    """One agent: the document's get, update, memories, start and end_user, and the rest."""

    def __init__(self, api: AgentNava, agent_id: str) -> None:
        self._api = api
        self.id = agent_id
        self._path = f"/agents/{segment(agent_id)}"

    def __repr__(self) -> str:
        return f"AgentClient({self.id!r})"

    def get(self) -> t.Agent:
        """The agent: version and memory_settings (with `notice`, to show in a chat you draw)."""
        return from_api(t.Agent, self._api._call("GET", self._path))

    def update(
        self,
        *,
        instructions: str | None = None,
        guardrails: str | None = None,
        actions: Sequence[t.ActionInput] | None = None,
        memory_settings: t.MemorySettingsInput | Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> t.Agent:
        """Change the configuration; publishes a new version at once. Answers the agent."""
        body = agent_body(
            instructions=instructions, guardrails=guardrails, actions=actions, memory_settings=memory_settings
        )
        return from_api(t.Agent, self._api._call("PATCH", self._path, body, idempotency_key=idempotency_key))

    def delete(self, *, idempotency_key: str | None = None) -> None:
        """The agent and every memory, end user and conversation on it (an owner's or admin's key)."""
        self._api._call("DELETE", self._path, idempotency_key=idempotency_key)

    def versions(self, *, limit: int | None = None, before: int | None = None) -> t.VersionPage:
        """Its published versions, newest first."""
        return from_api(
            t.VersionPage, self._api._call("GET", f"{self._path}/versions" + query(limit=limit, before=before))
        )

    def iter_versions(self, *, limit: int | None = None) -> Iterator[t.Version]:
        before = None
        while True:
            page = self.versions(limit=limit, before=before)
            yield from page.versions
            if page.next is None:
                return
            before = page.next.before

    def memories(self, *, limit: int | None = None, before: Before = None, cursor: str | None = None) -> t.MemoryPage:
        """Who has a memory on this agent, newest change first. Page with `before` (the last
        `updated_at`) or `cursor` (`page.next.cursor`)."""
        path = f"{self._path}/memories" + query(limit=limit, before=before, cursor=cursor)
        return from_api(t.MemoryPage, self._api._call("GET", path))

    def iter_memories(self, *, limit: int | None = None) -> Iterator[t.Memory]:
        """Every memory on this agent, newest change first, page after page (`limit` a page)."""
        cursor = None
        while True:
            page = self.memories(limit=limit, cursor=cursor)
            yield from page.memories
            if page.next is None:
                return
            cursor = page.next.cursor

    def end_users(
        self,
        *,
        limit: int | None = None,
        before: Before = None,
        cursor: str | None = None,
        q: str | None = None,
    ) -> t.EndUserPage:
        """Everyone this agent has met, with or without a memory; `q`: ids starting with it."""
        path = f"{self._path}/end-users" + query(limit=limit, before=before, cursor=cursor, q=q)
        return from_api(t.EndUserPage, self._api._call("GET", path))

    def iter_end_users(self, *, limit: int | None = None, q: str | None = None) -> Iterator[t.EndUser]:
        cursor = None
        while True:
            page = self.end_users(limit=limit, cursor=cursor, q=q)
            yield from page.end_users
            if page.next is None:
                return
            cursor = page.next.cursor

    def end_user(self, end_user_id: str) -> EndUserClient:
        """One end user of this agent: memory.get/set/delete/stop, erase, export, conversations."""
        return EndUserClient(self._api, self, end_user_id)

    def start(
        self,
        *,
        end_user_id: str,
        memory: bool | None = None,
        project: str | None = None,
        idempotency_key: str | None = None,
    ) -> StartedConversation:
        """Start a conversation; `memory=False`: it uses nothing remembered and adds nothing."""
        body = body_of(end_user_id=end_user_id, memory=memory, project=project)
        answer = self._api._call("POST", f"{self._path}/conversations", body, idempotency_key=idempotency_key)
        return StartedConversation(**t.fields_from_api(t.Conversation, answer), _api=self._api)

    @property
    def webhooks(self) -> WebhooksClient:
        """This agent's webhook endpoints (`create()` registers one for this agent only)."""
        return WebhooksClient(self._api, self.id)

    def try_(self, *, people: int | None = None, idempotency_key: str | None = None) -> TryJobClient:
        """Try the draft's memory settings (else the published ones) on the newest end users' past
        chats: a background job that saves nothing. (`try` is Python's keyword, hence `try_`.)"""
        answer = self._api._call("POST", f"{self._path}/try", body_of(people=people), idempotency_key=idempotency_key)
        return self.try_job(answer["id"], answer)

    def try_job(self, job_id: int, data: Any = None) -> TryJobClient:
        """A Try job by its id (`data`: as the API answered it, else it is read)."""
        path = f"{self._path}/try/{segment(job_id)}"
        return TryJobClient(
            **t.fields_from_api(t.TryJob, data or self._api._call("GET", path)), _api=self._api, _path=path
        )

    def apply(self, *, idempotency_key: str | None = None) -> ApplyJobClient:
        """Review every memory against the published settings: a background job (it can change and
        remove lines, and adds none)."""
        answer = self._api._call("POST", f"{self._path}/apply", idempotency_key=idempotency_key)
        return self.apply_job(answer["id"], answer)

    def apply_job(self, job_id: int, data: Any = None) -> ApplyJobClient:
        path = f"{self._path}/apply/{segment(job_id)}"
        fields = t.fields_from_api(t.ApplyJob, data or self._api._call("GET", path))
        return ApplyJobClient(**fields, _api=self._api, _path=path)

    def instruction_check(
        self, instructions: str, *, ask_first: bool | None = None, idempotency_key: str | None = None
    ) -> t.InstructionCheck:
        """What memory instructions would open (categories, decisions about people), before saving them."""
        body = body_of(instructions=instructions, ask_first=ask_first)
        answer = self._api._call("POST", f"{self._path}/instruction-check", body, idempotency_key=idempotency_key)
        return from_api(t.InstructionCheck, answer)

    def builder(self, message: str, *, idempotency_key: str | None = None) -> t.BuilderReply:
        """Tell the Builder what to change: its reply, what changed and the draft (it waits for Publish)."""
        answer = self._api._call("POST", f"{self._path}/builder", {"message": message}, idempotency_key=idempotency_key)
        return from_api(t.BuilderReply, answer)


class EndUserClient:
    """One end user of one agent."""

    def __init__(self, api: AgentNava, agent: AgentClient, end_user_id: str) -> None:
        self._api = api
        self.id = end_user_id
        self._path = f"{agent._path}/end-users/{segment(end_user_id)}"
        self.memory = MemoryClient(api, self._path)

    def __repr__(self) -> str:
        return f"EndUserClient({self.id!r})"

    def erase(self, *, idempotency_key: str | None = None) -> t.Erased:
        """Everything about them on this agent; answers what was removed, counted per kind."""
        return from_api(t.Erased, self._api._call("DELETE", self._path, idempotency_key=idempotency_key))

    def export(self) -> t.Export:
        """Everything kept about them on this agent (an access request's answer)."""
        return from_api(t.Export, self._api._call("GET", f"{self._path}/export"))

    def conversations(
        self, *, limit: int | None = None, before: Before = None, cursor: str | None = None
    ) -> t.ConversationPage:
        """Their conversations on this agent, newest first."""
        path = f"{self._path}/conversations" + query(limit=limit, before=before, cursor=cursor)
        return from_api(t.ConversationPage, self._api._call("GET", path))

    def iter_conversations(self, *, limit: int | None = None) -> Iterator[t.ConversationSummary]:
        cursor = None
        while True:
            page = self.conversations(limit=limit, cursor=cursor)
            yield from page.conversations
            if page.next is None:
                return
            cursor = page.next.cursor

    def consent(self, agreed: bool, *, idempotency_key: str | None = None) -> t.Consent:
        """Record their yes (sets `agreed_at`) or no (clears it), where you ask first."""
        answer = self._api._call("POST", f"{self._path}/consent", {"agreed": agreed}, idempotency_key=idempotency_key)
        return from_api(t.Consent, answer)


class MemoryClient:
    """One end user's memory. A read carries its version as `.etag`: pass the memory back,
    `set(text, memory=read)` or `delete(memory=read)`, and the write is refused with MemoryChanged
    (412) if the memory changed since. Without it the last write wins."""

    def __init__(self, api: AgentNava, end_user_path: str) -> None:
        self._api = api
        self._path = f"{end_user_path}/memory"

    def get(self) -> t.Memory:
        """Their memory: `text` is one fact per line, what the agent reads."""
        memory: t.Memory = self._api._memory("GET", self._path)
        return memory

    def set(self, text: str, *, memory: t.Memory | str | None = None) -> t.Memory:
        """Replace it. Refused with MemoryRefused (400) for a card, key or id number, or over 30 lines."""
        answer: t.Memory = self._api._memory("PUT", self._path, {"text": text}, memory)
        return answer

    def delete(self, *, memory: t.Memory | str | None = None) -> None:
        """Gone, and old chats cannot bring it back."""
        self._api._memory("DELETE", self._path, NO_BODY, memory)

    def stop(self, stop: bool = True) -> t.Memory:
        """They asked to stop: emptied, and nothing more is kept. `stop(False)`: they changed their mind."""
        answer: t.Memory = self._api._memory("POST", f"{self._path}/stop", {"stop": stop})
        return answer


class TeamEndUserClient:
    """One person across every agent of the team."""

    def __init__(self, api: AgentNava, end_user_id: str) -> None:
        self._api = api
        self.id = end_user_id

    def erase(self, *, idempotency_key: str | None = None) -> t.TeamErase:
        """Erase them on every agent of the team, all or none (an owner's or admin's key)."""
        answer = self._api._call("DELETE", f"/end-users/{segment(self.id)}", idempotency_key=idempotency_key)
        return from_api(t.TeamErase, answer)


@dataclass(frozen=True)
class ConversationClient:
    """A conversation's calls: get, send and record."""

    id: str
    _api: AgentNava = field(repr=False, compare=False, kw_only=True)

    @property
    def _path(self) -> str:
        return f"/conversations/{segment(self.id)}"

    def get(self) -> t.ConversationDetail:
        """The conversation with its messages, actions and events."""
        return from_api(t.ConversationDetail, self._api._call("GET", self._path))

    def send(self, text: str, *, idempotency_key: str | None = None) -> t.Reply:
        """Send the person's message; answers the agent's reply."""
        answer = self._api._call("POST", f"{self._path}/messages", {"text": text}, idempotency_key=idempotency_key)
        return from_api(t.Reply, answer)

    def record(
        self,
        type: str,
        *,
        name: str | None = None,
        status: str | None = None,
        text: str | None = None,
        idempotency_key: str | None = None,
    ) -> t.EventReceipt:
        """Record what ran: `record("action", name="renew_plan", status="succeeded")`, or
        `record("tool_result" | "file" | "web_page", text=...)` (never written into a memory)."""
        body = body_of(type=type, name=name, status=status, text=text)
        answer = self._api._call("POST", f"{self._path}/events", body, idempotency_key=idempotency_key)
        return from_api(t.EventReceipt, answer)


@dataclass(frozen=True)
class StartedConversation(t.Conversation, ConversationClient):
    """A conversation as `agent.start()` answered it, with its calls."""


@dataclass(frozen=True)
class TryJobClient(t.TryJob):
    """A Try job as last read, with get, cancel and wait."""

    _api: AgentNava = field(repr=False, compare=False, kw_only=True)
    _path: str = field(repr=False, compare=False, kw_only=True)

    def _read(self, data: Any) -> TryJobClient:
        return TryJobClient(**t.fields_from_api(t.TryJob, data), _api=self._api, _path=self._path)

    def get(self) -> TryJobClient:
        """The job as it is now."""
        return self._read(self._api._call("GET", self._path))

    def cancel(self) -> TryJobClient:
        """Stop it (between two people); answers the job."""
        return self._read(self._api._call("POST", f"{self._path}/cancel"))

    def wait(self, *, interval: float = 1.0, timeout: float | None = None) -> TryJobClient:
        """Poll until it is done, cancelled or failed; answers the finished job (TimeoutError past `timeout`)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        job = self
        while job.status in ("queued", "running"):
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"Try job {self.id} is still {job.status}")
            time.sleep(interval)
            job = job.get()
        return job


@dataclass(frozen=True)
class ApplyJobClient(t.ApplyJob):
    """An Apply job as last read, with get, cancel and wait."""

    _api: AgentNava = field(repr=False, compare=False, kw_only=True)
    _path: str = field(repr=False, compare=False, kw_only=True)

    def _read(self, data: Any) -> ApplyJobClient:
        return ApplyJobClient(**t.fields_from_api(t.ApplyJob, data), _api=self._api, _path=self._path)

    def get(self) -> ApplyJobClient:
        return self._read(self._api._call("GET", self._path))

    def cancel(self) -> ApplyJobClient:
        """Stop it (between two memories); answers the job."""
        return self._read(self._api._call("POST", f"{self._path}/cancel"))

    def wait(self, *, interval: float = 1.0, timeout: float | None = None) -> ApplyJobClient:
        deadline = None if timeout is None else time.monotonic() + timeout
        job = self
        while job.status in ("queued", "running"):
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"Apply job {self.id} is still {job.status}")
            time.sleep(interval)
            job = job.get()
        return job


class WebhooksClient:
    """Webhook endpoints: the team's, or one agent's (`agent.webhooks`). Creating, changing and
    deleting want an owner's or admin's key."""

    def __init__(self, api: AgentNava, agent_id: str | None) -> None:
        self._api = api
        self._agent_id = agent_id

    verify_signature = staticmethod(verify_signature)

    def list(self) -> list[t.Webhook]:
        answer = self._api._call("GET", "/webhooks")
        hooks = [from_api(t.Webhook, hook) for hook in answer["webhooks"]]
        return hooks if self._agent_id is None else [hook for hook in hooks if hook.agent_id == self._agent_id]

    def create(
        self,
        *,
        url: str,
        events: Sequence[str],
        agent_id: str | None = None,
        include_text: bool | None = None,
        idempotency_key: str | None = None,
    ) -> t.WebhookWithSecret:
        """Register an endpoint; the answer holds its `secret`, shown this once."""
        body = body_of(url=url, events=list(events), agent_id=agent_id or self._agent_id, include_text=include_text)
        return from_api(
            t.WebhookWithSecret, self._api._call("POST", "/webhooks", body, idempotency_key=idempotency_key)
        )

    def get(self, webhook_id: str) -> t.WebhookDetail:
        """The endpoint with its recent deliveries."""
        return from_api(t.WebhookDetail, self._api._call("GET", f"/webhooks/{segment(webhook_id)}"))

    def update(
        self,
        webhook_id: str,
        *,
        url: str | None = None,
        events: Sequence[str] | None = None,
        include_text: bool | None = None,
        active: bool | None = None,
        rotate_secret: bool | None = None,
        idempotency_key: str | None = None,
    ) -> t.WebhookWithSecret:
        body = body_of(
            url=url,
            events=list(events) if events is not None else None,
            include_text=include_text,
            active=active,
            rotate_secret=rotate_secret,
        )
        answer = self._api._call("PATCH", f"/webhooks/{segment(webhook_id)}", body, idempotency_key=idempotency_key)
        return from_api(t.WebhookWithSecret, answer)

    def delete(self, webhook_id: str, *, idempotency_key: str | None = None) -> None:
        self._api._call("DELETE", f"/webhooks/{segment(webhook_id)}", idempotency_key=idempotency_key)
