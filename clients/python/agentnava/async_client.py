"""The asynchronous client: `AsyncAgentNava(api_key=..., base_url=...)`, on httpx's AsyncClient.

    from agentnava import AsyncAgentNava

    async with AsyncAgentNava(api_key="ank_...", base_url="http://127.0.0.1:8000") as client:
        agent = client.agent("agt_493fb4f0cf13")
        await agent.update(memory_settings={"on": True, "quiet_minutes": 15})
        memory = await agent.end_user("u_ananya").memory.get()

The same surface as `client.py` (`AgentNava`), each call awaited, the `iter_*` calls async iterators
(`async for memory in agent.iter_memories()`). Written beside it by hand, kept in step by
tests/clients/test_python_client.py, which checks both expose the same calls."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping, Sequence
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
    "AsyncAgentClient",
    "AsyncAgentNava",
    "AsyncApplyJobClient",
    "AsyncConversationClient",
    "AsyncEndUserClient",
    "AsyncMemoryClient",
    "AsyncStartedConversation",
    "AsyncTeamEndUserClient",
    "AsyncTryJobClient",
    "AsyncWebhooksClient",
]

Before = datetime | str | None


class AsyncAgentNava:
    """A team's API key on one AgentNava server.

    `api_key` and `base_url` default to the environment's AGENTNAVA_API_KEY and AGENTNAVA_BASE_URL
    (`base_url` with or without /api/v1). Writes carry a new Idempotency-Key each (pass
    `idempotency_key=` to a call to choose it); `max_retries` tries again after a dropped connection,
    429 or 5xx where that is safe (see `agentnava._core`). `http_client` is an `httpx.AsyncClient` of yours
    (proxies, certificates); this client then leaves closing it to you."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 2,
        idempotency_keys: bool = True,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._core = Core(
            api_key=api_key, base_url=base_url, max_retries=max_retries, idempotency_keys=idempotency_keys
        )
        self._http = http_client if http_client is not None else httpx.AsyncClient(timeout=timeout)
        self._owns_http = http_client is None

    @property
    def base_url(self) -> str:
        return self._core.base_url

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncAgentNava:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # --- The team -------------------------------------------------------------------------------

    def agent(self, agent_id: str) -> AsyncAgentClient:
        """One agent, with the document's calls: get, update, memories, start, end_user."""
        return AsyncAgentClient(self, agent_id)

    async def agents(
        self, *, limit: int | None = None, before: Before = None, cursor: str | None = None
    ) -> t.AgentPage:
        """The team's agents, newest first."""
        return from_api(
            t.AgentPage, await self._call("GET", "/agents" + query(limit=limit, before=before, cursor=cursor))
        )

    async def iter_agents(self, *, limit: int | None = None) -> AsyncIterator[t.Agent]:
        """Every agent of the team, page after page."""
        cursor = None
        while True:
            page = await self.agents(limit=limit, cursor=cursor)
            for item in page.agents:
                yield item
            if page.next is None:
                return
            cursor = page.next.cursor

    async def create_agent(
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
        answer = await self._call("POST", "/agents", {"name": name, **body}, idempotency_key=idempotency_key)
        return from_api(t.Agent, answer)

    def end_user(self, end_user_id: str) -> AsyncTeamEndUserClient:
        """One person across the team's agents: `erase()` removes them on every agent."""
        return AsyncTeamEndUserClient(self, end_user_id)

    def conversation(self, conversation_id: str) -> AsyncConversationClient:
        """A conversation you already started (after a restart, say), by its id."""
        return AsyncConversationClient(id=conversation_id, _api=self)

    async def audit_log(
        self, *, limit: int | None = None, before: Before = None, cursor: str | None = None
    ) -> t.AuditPage:
        """Who did what to the team's access, newest first (an owner's or admin's key)."""
        answer = await self._call("GET", "/audit-log" + query(limit=limit, before=before, cursor=cursor))
        return from_api(t.AuditPage, answer)

    async def iter_audit_log(self, *, limit: int | None = None) -> AsyncIterator[t.AuditEvent]:
        cursor = None
        while True:
            page = await self.audit_log(limit=limit, cursor=cursor)
            for item in page.events:
                yield item
            if page.next is None:
                return
            cursor = page.next.cursor

    @property
    def webhooks(self) -> AsyncWebhooksClient:
        """The team's webhook endpoints."""
        return AsyncWebhooksClient(self, None)

    verify_signature = staticmethod(verify_signature)

    # --- Any call -------------------------------------------------------------------------------

    async def request(
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
        return await self._call(
            method, path, NO_BODY if body is None else body, headers=headers, idempotency_key=idempotency_key
        )

    async def _call(
        self,
        method: str,
        path: str,
        body: Any = NO_BODY,
        *,
        headers: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> Any:
        return (await self._send(method, path, body, headers=headers, idempotency_key=idempotency_key))[0]

    async def _send(
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
                response = await self._http.request(
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
            await asyncio.sleep(wait)

    async def _memory(self, method: str, path: str, body: Any = NO_BODY, made_on: t.Memory | str | None = None) -> Any:
        headers = if_match(made_on)
        payload, response = await self._send(method, path, body, headers=headers)
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


class AsyncAgentClient:
    """One agent: the document's get, update, memories, start and end_user, and the rest."""

    def __init__(self, api: AsyncAgentNava, agent_id: str) -> None:
        self._api = api
        self.id = agent_id
        self._path = f"/agents/{segment(agent_id)}"

    def __repr__(self) -> str:
        return f"AgentClient({self.id!r})"

    async def get(self) -> t.Agent:
        """The agent: version and memory_settings (with `notice`, to show in a chat you draw)."""
        return from_api(t.Agent, await self._api._call("GET", self._path))

    async def update(
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
        return from_api(t.Agent, await self._api._call("PATCH", self._path, body, idempotency_key=idempotency_key))

    async def delete(self, *, idempotency_key: str | None = None) -> None:
        """The agent and every memory, end user and conversation on it (an owner's or admin's key)."""
        await self._api._call("DELETE", self._path, idempotency_key=idempotency_key)

    async def versions(self, *, limit: int | None = None, before: int | None = None) -> t.VersionPage:
        """Its published versions, newest first."""
        return from_api(
            t.VersionPage, await self._api._call("GET", f"{self._path}/versions" + query(limit=limit, before=before))
        )

    async def iter_versions(self, *, limit: int | None = None) -> AsyncIterator[t.Version]:
        before = None
        while True:
            page = await self.versions(limit=limit, before=before)
            for item in page.versions:
                yield item
            if page.next is None:
                return
            before = page.next.before

    async def memories(
        self, *, limit: int | None = None, before: Before = None, cursor: str | None = None
    ) -> t.MemoryPage:
        """Who has a memory on this agent, newest change first. Page with `before` (the last
        `updated_at`) or `cursor` (`page.next.cursor`)."""
        path = f"{self._path}/memories" + query(limit=limit, before=before, cursor=cursor)
        return from_api(t.MemoryPage, await self._api._call("GET", path))

    async def iter_memories(self, *, limit: int | None = None) -> AsyncIterator[t.Memory]:
        """Every memory on this agent, newest change first, page after page (`limit` a page)."""
        cursor = None
        while True:
            page = await self.memories(limit=limit, cursor=cursor)
            for item in page.memories:
                yield item
            if page.next is None:
                return
            cursor = page.next.cursor

    async def end_users(
        self,
        *,
        limit: int | None = None,
        before: Before = None,
        cursor: str | None = None,
        q: str | None = None,
    ) -> t.EndUserPage:
        """Everyone this agent has met, with or without a memory; `q`: ids starting with it."""
        path = f"{self._path}/end-users" + query(limit=limit, before=before, cursor=cursor, q=q)
        return from_api(t.EndUserPage, await self._api._call("GET", path))

    async def iter_end_users(self, *, limit: int | None = None, q: str | None = None) -> AsyncIterator[t.EndUser]:
        cursor = None
        while True:
            page = await self.end_users(limit=limit, cursor=cursor, q=q)
            for item in page.end_users:
                yield item
            if page.next is None:
                return
            cursor = page.next.cursor

    def end_user(self, end_user_id: str) -> AsyncEndUserClient:
        """One end user of this agent: memory.get/set/delete/stop, erase, export, conversations."""
        return AsyncEndUserClient(self._api, self, end_user_id)

    async def start(
        self,
        *,
        end_user_id: str,
        memory: bool | None = None,
        project: str | None = None,
        idempotency_key: str | None = None,
    ) -> AsyncStartedConversation:
        """Start a conversation; `memory=False`: it uses nothing remembered and adds nothing."""
        body = body_of(end_user_id=end_user_id, memory=memory, project=project)
        answer = await self._api._call("POST", f"{self._path}/conversations", body, idempotency_key=idempotency_key)
        return AsyncStartedConversation(**t.fields_from_api(t.Conversation, answer), _api=self._api)

    @property
    def webhooks(self) -> AsyncWebhooksClient:
        """This agent's webhook endpoints (`create()` registers one for this agent only)."""
        return AsyncWebhooksClient(self._api, self.id)

    async def try_(self, *, people: int | None = None, idempotency_key: str | None = None) -> AsyncTryJobClient:
        """Try the draft's memory settings (else the published ones) on the newest end users' past
        chats: a background job that saves nothing. (`try` is Python's keyword, hence `try_`.)"""
        answer = await self._api._call(
            "POST", f"{self._path}/try", body_of(people=people), idempotency_key=idempotency_key
        )
        return await self.try_job(answer["id"], answer)

    async def try_job(self, job_id: int, data: Any = None) -> AsyncTryJobClient:
        """A Try job by its id (`data`: as the API answered it, else it is read)."""
        path = f"{self._path}/try/{segment(job_id)}"
        return AsyncTryJobClient(
            **t.fields_from_api(t.TryJob, data or await self._api._call("GET", path)), _api=self._api, _path=path
        )

    async def apply(self, *, idempotency_key: str | None = None) -> AsyncApplyJobClient:
        """Review every memory against the published settings: a background job (it can change and
        remove lines, and adds none)."""
        answer = await self._api._call("POST", f"{self._path}/apply", idempotency_key=idempotency_key)
        return await self.apply_job(answer["id"], answer)

    async def apply_job(self, job_id: int, data: Any = None) -> AsyncApplyJobClient:
        path = f"{self._path}/apply/{segment(job_id)}"
        fields = t.fields_from_api(t.ApplyJob, data or await self._api._call("GET", path))
        return AsyncApplyJobClient(**fields, _api=self._api, _path=path)

    async def instruction_check(
        self, instructions: str, *, ask_first: bool | None = None, idempotency_key: str | None = None
    ) -> t.InstructionCheck:
        """What memory instructions would open (categories, decisions about people), before saving them."""
        body = body_of(instructions=instructions, ask_first=ask_first)
        answer = await self._api._call("POST", f"{self._path}/instruction-check", body, idempotency_key=idempotency_key)
        return from_api(t.InstructionCheck, answer)

    async def builder(self, message: str, *, idempotency_key: str | None = None) -> t.BuilderReply:
        """Tell the Builder what to change: its reply, what changed and the draft (it waits for Publish)."""
        answer = await self._api._call(
            "POST", f"{self._path}/builder", {"message": message}, idempotency_key=idempotency_key
        )
        return from_api(t.BuilderReply, answer)


class AsyncEndUserClient:
    """One end user of one agent."""

    def __init__(self, api: AsyncAgentNava, agent: AsyncAgentClient, end_user_id: str) -> None:
        self._api = api
        self.id = end_user_id
        self._path = f"{agent._path}/end-users/{segment(end_user_id)}"
        self.memory = AsyncMemoryClient(api, self._path)

    def __repr__(self) -> str:
        return f"EndUserClient({self.id!r})"

    async def erase(self, *, idempotency_key: str | None = None) -> t.Erased:
        """Everything about them on this agent; answers what was removed, counted per kind."""
        return from_api(t.Erased, await self._api._call("DELETE", self._path, idempotency_key=idempotency_key))

    async def export(self) -> t.Export:
        """Everything kept about them on this agent (an access request's answer)."""
        return from_api(t.Export, await self._api._call("GET", f"{self._path}/export"))

    async def conversations(
        self, *, limit: int | None = None, before: Before = None, cursor: str | None = None
    ) -> t.ConversationPage:
        """Their conversations on this agent, newest first."""
        path = f"{self._path}/conversations" + query(limit=limit, before=before, cursor=cursor)
        return from_api(t.ConversationPage, await self._api._call("GET", path))

    async def iter_conversations(self, *, limit: int | None = None) -> AsyncIterator[t.ConversationSummary]:
        cursor = None
        while True:
            page = await self.conversations(limit=limit, cursor=cursor)
            for item in page.conversations:
                yield item
            if page.next is None:
                return
            cursor = page.next.cursor

    async def consent(self, agreed: bool, *, idempotency_key: str | None = None) -> t.Consent:
        """Record their yes (sets `agreed_at`) or no (clears it), where you ask first."""
        answer = await self._api._call(
            "POST", f"{self._path}/consent", {"agreed": agreed}, idempotency_key=idempotency_key
        )
        return from_api(t.Consent, answer)


class AsyncMemoryClient:
    """One end user's memory. A read carries its version as `.etag`: pass the memory back,
    `set(text, memory=read)` or `delete(memory=read)`, and the write is refused with MemoryChanged
    (412) if the memory changed since. Without it the last write wins."""

    def __init__(self, api: AsyncAgentNava, end_user_path: str) -> None:
        self._api = api
        self._path = f"{end_user_path}/memory"

    async def get(self) -> t.Memory:
        """Their memory: `text` is one fact per line, what the agent reads."""
        memory: t.Memory = await self._api._memory("GET", self._path)
        return memory

    async def set(self, text: str, *, memory: t.Memory | str | None = None) -> t.Memory:
        """Replace it. Refused with MemoryRefused (400) for a card, key or id number, or over 30 lines."""
        answer: t.Memory = await self._api._memory("PUT", self._path, {"text": text}, memory)
        return answer

    async def delete(self, *, memory: t.Memory | str | None = None) -> None:
        """Gone, and old chats cannot bring it back."""
        await self._api._memory("DELETE", self._path, NO_BODY, memory)

    async def stop(self, stop: bool = True) -> t.Memory:
        """They asked to stop: emptied, and nothing more is kept. `stop(False)`: they changed their mind."""
        answer: t.Memory = await self._api._memory("POST", f"{self._path}/stop", {"stop": stop})
        return answer


class AsyncTeamEndUserClient:
    """One person across every agent of the team."""

    def __init__(self, api: AsyncAgentNava, end_user_id: str) -> None:
        self._api = api
        self.id = end_user_id

    async def erase(self, *, idempotency_key: str | None = None) -> t.TeamErase:
        """Erase them on every agent of the team, all or none (an owner's or admin's key)."""
        answer = await self._api._call("DELETE", f"/end-users/{segment(self.id)}", idempotency_key=idempotency_key)
        return from_api(t.TeamErase, answer)


@dataclass(frozen=True)
class AsyncConversationClient:
    """A conversation's calls: get, send and record."""

    id: str
    _api: AsyncAgentNava = field(repr=False, compare=False, kw_only=True)

    @property
    def _path(self) -> str:
        return f"/conversations/{segment(self.id)}"

    async def get(self) -> t.ConversationDetail:
        """The conversation with its messages, actions and events."""
        return from_api(t.ConversationDetail, await self._api._call("GET", self._path))

    async def send(self, text: str, *, idempotency_key: str | None = None) -> t.Reply:
        """Send the person's message; answers the agent's reply."""
        answer = await self._api._call(
            "POST", f"{self._path}/messages", {"text": text}, idempotency_key=idempotency_key
        )
        return from_api(t.Reply, answer)

    async def record(
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
        answer = await self._api._call("POST", f"{self._path}/events", body, idempotency_key=idempotency_key)
        return from_api(t.EventReceipt, answer)


@dataclass(frozen=True)
class AsyncStartedConversation(t.Conversation, AsyncConversationClient):
    """A conversation as `agent.start()` answered it, with its calls."""


@dataclass(frozen=True)
class AsyncTryJobClient(t.TryJob):
    """A Try job as last read, with get, cancel and wait."""

    _api: AsyncAgentNava = field(repr=False, compare=False, kw_only=True)
    _path: str = field(repr=False, compare=False, kw_only=True)

    def _read(self, data: Any) -> AsyncTryJobClient:
        return AsyncTryJobClient(**t.fields_from_api(t.TryJob, data), _api=self._api, _path=self._path)

    async def get(self) -> AsyncTryJobClient:
        """The job as it is now."""
        return self._read(await self._api._call("GET", self._path))

    async def cancel(self) -> AsyncTryJobClient:
        """Stop it (between two people); answers the job."""
        return self._read(await self._api._call("POST", f"{self._path}/cancel"))

    async def wait(self, *, interval: float = 1.0, timeout: float | None = None) -> AsyncTryJobClient:
        """Poll until it is done, cancelled or failed; answers the finished job (TimeoutError past `timeout`)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        job = self
        while job.status in ("queued", "running"):
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"Try job {self.id} is still {job.status}")
            await asyncio.sleep(interval)
            job = await job.get()
        return job


@dataclass(frozen=True)
class AsyncApplyJobClient(t.ApplyJob):
    """An Apply job as last read, with get, cancel and wait."""

    _api: AsyncAgentNava = field(repr=False, compare=False, kw_only=True)
    _path: str = field(repr=False, compare=False, kw_only=True)

    def _read(self, data: Any) -> AsyncApplyJobClient:
        return AsyncApplyJobClient(**t.fields_from_api(t.ApplyJob, data), _api=self._api, _path=self._path)

    async def get(self) -> AsyncApplyJobClient:
        return self._read(await self._api._call("GET", self._path))

    async def cancel(self) -> AsyncApplyJobClient:
        """Stop it (between two memories); answers the job."""
        return self._read(await self._api._call("POST", f"{self._path}/cancel"))

    async def wait(self, *, interval: float = 1.0, timeout: float | None = None) -> AsyncApplyJobClient:
        deadline = None if timeout is None else time.monotonic() + timeout
        job = self
        while job.status in ("queued", "running"):
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"Apply job {self.id} is still {job.status}")
            await asyncio.sleep(interval)
            job = await job.get()
        return job


class AsyncWebhooksClient:
    """Webhook endpoints: the team's, or one agent's (`agent.webhooks`). Creating, changing and
    deleting want an owner's or admin's key."""

    def __init__(self, api: AsyncAgentNava, agent_id: str | None) -> None:
        self._api = api
        self._agent_id = agent_id

    verify_signature = staticmethod(verify_signature)

    async def list(self) -> list[t.Webhook]:
        answer = await self._api._call("GET", "/webhooks")
        hooks = [from_api(t.Webhook, hook) for hook in answer["webhooks"]]
        return hooks if self._agent_id is None else [hook for hook in hooks if hook.agent_id == self._agent_id]

    async def create(
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
            t.WebhookWithSecret, await self._api._call("POST", "/webhooks", body, idempotency_key=idempotency_key)
        )

    async def get(self, webhook_id: str) -> t.WebhookDetail:
        """The endpoint with its recent deliveries."""
        return from_api(t.WebhookDetail, await self._api._call("GET", f"/webhooks/{segment(webhook_id)}"))

    async def update(
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
        answer = await self._api._call(
            "PATCH", f"/webhooks/{segment(webhook_id)}", body, idempotency_key=idempotency_key
        )
        return from_api(t.WebhookWithSecret, answer)

    async def delete(self, webhook_id: str, *, idempotency_key: str | None = None) -> None:
        await self._api._call("DELETE", f"/webhooks/{segment(webhook_id)}", idempotency_key=idempotency_key)
