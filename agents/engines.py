"""Model engines: the one module every feature that needs a language model goes through.

Two engines answer the same two questions:
- `structured(task, system, payload, schema)`: a JSON object that follows `schema`
  (the memory writer's line operations, the Builder's changes);
- `reply(task, system, messages)`: a chat reply as text.

`OpenAIEngine` talks to any OpenAI-compatible server with the `openai` package
(OPENAI_API_KEY, OPENAI_BASE_URL for Ollama / vLLM / llama.cpp, AGENTNAVA_MODEL), with its
timeout and retries set explicitly, and asks for strict JSON-schema output. Its answer is read at
most MODEL_ANSWER_MAX_BYTES (uncompressed: it asks for no compression) before anything parses it:
a longer one is refused (502 `model_too_large`), so no chat reply, Builder reply or memory write
ever holds more.

`OfflineEngine` needs no network and is the default without a key. It is not a language
model: it is deterministic code, rules over the text, one function per task written by the app
that owns the task and named by its dotted path in `settings.AGENTNAVA_OFFLINE_RULES` (resolved on
first use, as Django resolves its backends). It receives exactly what a model would receive, so
both engines run through the same code path.
"""

import functools
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from django.conf import settings
from django.dispatch import Signal
from django.utils.module_loading import import_string

from agents.errors import AppError

if TYPE_CHECKING:
    import httpx2

log = logging.getLogger(__name__)
# Sent after every call to a model server: task=, seconds=, error_code= (None when it answered).
model_called = Signal()


class EngineError(AppError):
    """The model could not give a usable answer: timeout, refusal, malformed output."""

    status = 502

    def __init__(self, message: str, *, code: str = "model_error"):
        super().__init__(code, message)


@dataclass(frozen=True)
class EngineResult:
    data: Any  # dict for structured(), str for reply()
    engine: str
    input_tokens: int = 0
    output_tokens: int = 0
    duration_ms: int = 0


class Engine(Protocol):
    """What the rest of the code asks of a model engine: structured operations, or a reply. The
    offline rules and an OpenAI-compatible server both answer it; tests swap in their own."""

    name: str

    @property
    def batch_size(self) -> int:
        """How many people one quiet-window task reads."""
        ...

    @property
    def concurrency(self) -> int:
        """How many of its calls `concurrently` keeps in flight at once (1: one after another)."""
        ...

    def structured(self, *, task: str, system: str, payload: dict, schema: dict) -> EngineResult: ...

    def reply(self, *, task: str, system: str, messages: list[dict]) -> EngineResult: ...


def estimate_tokens(value: Any) -> int:
    """About four characters a token: how the offline engine reports its input size."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return max(1, len(text) // 4)


class OfflineEngine:
    name = "offline"
    # How many people one quiet-window task reads: the rules answer in milliseconds, so a batch
    # shares its reads and writes (memory.writer.batch).
    batch_size = 25
    concurrency = 1  # CPU only: nothing to wait on, so calls run one after another in the caller's thread

    def _handler(self, task: str) -> Callable[[dict], dict]:
        path = settings.AGENTNAVA_OFFLINE_RULES.get(task)
        if path is None:
            raise EngineError(f"The offline engine has no rules for {task!r}.")
        return offline_rules(path)

    def structured(self, *, task: str, system: str, payload: dict, schema: dict) -> EngineResult:
        started = time.monotonic()
        data = self._handler(task)(payload)
        return EngineResult(
            data=data,
            engine=self.name,
            input_tokens=estimate_tokens(system) + estimate_tokens(payload),
            output_tokens=estimate_tokens(data),
            duration_ms=int((time.monotonic() - started) * 1000),
        )

    def reply(self, *, task: str, system: str, messages: list[dict]) -> EngineResult:
        started = time.monotonic()
        text = self._handler(task)({"system": system, "messages": messages})["text"]
        return EngineResult(
            data=text,
            engine=self.name,
            input_tokens=estimate_tokens(system) + estimate_tokens(messages),
            output_tokens=estimate_tokens(text),
            duration_ms=int((time.monotonic() - started) * 1000),
        )


@functools.lru_cache(maxsize=32)
def offline_rules(path: str) -> Callable[[dict], dict]:
    """The offline rules at a dotted path (`settings.AGENTNAVA_OFFLINE_RULES`), imported on first use."""
    return import_string(path)


_Call = TypeVar("_Call", bound=Callable[..., EngineResult])


def _observed(method: _Call) -> _Call:
    """Send `model_called` after a model call, answered or not: the task, the time it took and the
    error code (None when the answer was usable). For /metrics; codes only, never the words."""

    @functools.wraps(method)
    def call(self: Engine, *, task: str, **kwargs: Any) -> EngineResult:
        started = time.monotonic()
        error_code = None
        try:
            return method(self, task=task, **kwargs)
        except EngineError as exc:
            error_code = exc.code
            raise
        except Exception:
            error_code = "model_error"
            raise
        finally:
            model_called.send(sender=type(self), task=task, seconds=time.monotonic() - started, error_code=error_code)

    return cast(_Call, call)


class ModelAnswerTooLarge(Exception):
    """The model server's answer is over MODEL_ANSWER_MAX_BYTES. Raised while the body is read; the
    openai package lets its own errors through without retrying, so this one subclasses it (below)."""


def _capped_client(max_bytes: int, timeout: float) -> "httpx2.Client":
    """An httpx2 client for the openai package that reads an answer's body only up to `max_bytes`."""
    import httpx2
    import openai

    class TooLarge(ModelAnswerTooLarge, openai.OpenAIError):
        pass

    class CappedStream(httpx2.SyncByteStream):
        def __init__(self, inner: httpx2.SyncByteStream) -> None:
            self.inner = inner

        def __iter__(self) -> Iterator[bytes]:
            seen = 0
            for chunk in self.inner:
                seen += len(chunk)
                if seen > max_bytes:
                    raise TooLarge(f"over {max_bytes} bytes")
                yield chunk

        def close(self) -> None:
            self.inner.close()

    def cap(response: httpx2.Response) -> None:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise TooLarge(f"{declared} bytes declared")
        response.stream = CappedStream(cast(httpx2.SyncByteStream, response.stream))  # a synchronous client

    return openai.DefaultHttpx2Client(
        timeout=timeout, headers={"Accept-Encoding": "identity"}, event_hooks={"response": [cap]}
    )


class OpenAIEngine:
    name = "openai"

    @property
    def concurrency(self) -> int:
        """Calls in flight at once in this process (MODEL_CONCURRENCY): a call waits seconds on the
        model, so many wait together (`concurrently`; every call also holds a `model_slots` slot)."""
        return max(1, settings.MODEL_CONCURRENCY)

    @property
    def batch_size(self) -> int:
        """People one quiet-window task reads: one wave of calls in flight together, so a task
        takes about one call's time (at worst one call's timeout and retries, far inside the
        cluster's timeout) and shares its reads and its commit."""
        return self.concurrency

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        model: str = "gpt-4o-mini",
        timeout: float = 30.0,
        max_retries: int = 2,
        max_answer_bytes: int = 65536,
    ):
        from openai import OpenAI  # imported here so the offline engine never needs it

        self.model = model
        self.max_answer_bytes = max_answer_bytes
        self.client = OpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            http_client=_capped_client(max_answer_bytes, timeout),
        )

    def _complete(self, **kwargs: Any) -> tuple[Any, int]:
        import openai

        started = time.monotonic()
        try:
            with model_slots().held():
                response = self.client.chat.completions.create(model=self.model, **kwargs)
        except ModelAnswerTooLarge as exc:
            raise EngineError(
                f"The model's answer was over {self.max_answer_bytes} bytes; nothing of it was kept.",
                code="model_too_large",
            ) from exc
        except openai.APITimeoutError as exc:
            raise EngineError("The model did not answer in time.", code="model_timeout") from exc
        except openai.RateLimitError as exc:
            raise EngineError("The model is rate limited; try again later.", code="model_rate_limited") from exc
        except openai.APIConnectionError as exc:
            raise EngineError("The model server could not be reached.", code="model_unreachable") from exc
        except openai.APIStatusError as exc:
            raise EngineError(f"The model server answered HTTP {exc.status_code}.") from exc
        except (openai.OpenAIError, ValueError, TypeError) as exc:  # malformed bodies and the like
            raise EngineError(
                f"The model's answer could not be read: {type(exc).__name__}.", code="model_malformed"
            ) from exc
        return response, int((time.monotonic() - started) * 1000)

    @staticmethod
    def _usage(response: Any) -> tuple[int, int]:
        usage = getattr(response, "usage", None)
        return (getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0)

    @staticmethod
    def _content(response: Any) -> str:
        try:
            choice = response.choices[0]
            content = choice.message.content
        except (AttributeError, IndexError, TypeError):
            raise EngineError("The model's answer has no message.") from None
        if getattr(choice.message, "refusal", None):
            raise EngineError("The model refused to answer.", code="model_refused")
        if not isinstance(content, str) or not content.strip():
            raise EngineError("The model's answer is empty.")
        return content

    @_observed
    def structured(self, *, task: str, system: str, payload: dict, schema: dict) -> EngineResult:
        response, duration = self._complete(
            messages=[
                {"role": "system", "content": system},
                {"role": "user", "content": json.dumps(payload, ensure_ascii=False)},
            ],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": task, "schema": schema, "strict": True},
            },
            temperature=0,
        )
        content = self._content(response)
        try:
            data = json.loads(content)
        except json.JSONDecodeError:
            raise EngineError("The model's answer is not valid JSON.", code="model_malformed") from None
        if not isinstance(data, dict):
            raise EngineError("The model's answer is not a JSON object.", code="model_malformed")
        tokens_in, tokens_out = self._usage(response)
        return EngineResult(data, self.name, tokens_in, tokens_out, duration)

    @_observed
    def reply(self, *, task: str, system: str, messages: list[dict]) -> EngineResult:
        response, duration = self._complete(
            messages=[{"role": "system", "content": system}, *messages], temperature=0.3
        )
        tokens_in, tokens_out = self._usage(response)
        return EngineResult(self._content(response).strip(), self.name, tokens_in, tokens_out, duration)


def get_engine() -> Engine:
    """The configured engine: OpenAI-compatible when AGENTNAVA_ENGINE is 'openai' (the default
    when OPENAI_API_KEY is set), else the offline engine."""
    if settings.AGENTNAVA_ENGINE == "openai":
        return _openai_engine(
            settings.OPENAI_API_KEY or "not-needed",
            settings.OPENAI_BASE_URL,
            settings.AGENTNAVA_MODEL,
            settings.OPENAI_TIMEOUT_SECONDS,
            settings.OPENAI_MAX_RETRIES,
            settings.MODEL_ANSWER_MAX_BYTES,
        )
    return OfflineEngine()


@functools.lru_cache(maxsize=8)
def _openai_engine(
    api_key: str, base_url: str | None, model: str, timeout: float, max_retries: int, max_answer_bytes: int
) -> "OpenAIEngine":
    """One engine (one OpenAI client, thread-safe, with its connection pool) per process and
    setting: building a client costs ~25 ms of CPU and a new connection (docs/performance.md)."""
    return OpenAIEngine(
        api_key=api_key,
        base_url=base_url,
        model=model,
        timeout=timeout,
        max_retries=max_retries,
        max_answer_bytes=max_answer_bytes,
    )


# --- Calls in flight together ------------------------------------------------------------------

_Item = TypeVar("_Item")
_Out = TypeVar("_Out")


def concurrently(engine: Engine, call: Callable[[_Item], _Out], items: Sequence[_Item]) -> list[_Out]:
    """`call(item)` for each item, in order of the items, up to `engine.concurrency` at once in
    threads of a pool (a model's calls wait on the network, so they wait together); with the offline
    engine (concurrency 1) one after another in this thread, exactly as a plain loop. `call` must
    not touch the database (each thread would open its own connection): read first, write after.
    An exception `call` raises is raised here, after every call has ended."""
    workers = min(max(1, getattr(engine, "concurrency", 1)), len(items))
    if workers <= 1:
        return [call(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="model-call") as pool:
        return list(pool.map(call, items))


# One script: drop the holders whose time is up, then take a slot if fewer than the limit hold one.
# The time is the Redis server's, the same for every process whatever its clock.
_TAKE_SLOT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return 1
end
return 0
"""
SLOTS_KEY = "agentnava:model-slots"


class ModelSlots:
    """At most `limit` model calls in flight in this process (a semaphore) and, with Redis, at most
    `total` across every process (a sorted set of holders in Redis, each with its time: a holder
    older than `hold_ms`, a worker that died holding it, is dropped by the next taker, so a dead
    worker never keeps a slot). Redis unreachable: the process's own cap holds alone (logged)."""

    def __init__(self, *, limit: int, total: int = 0, redis_url: str = "", hold_ms: int = 120_000):
        self.limit, self.total, self.hold_ms = limit, total, hold_ms
        self._local = threading.BoundedSemaphore(limit)
        self._redis = None
        if redis_url and total > 0:
            import redis

            self._redis = redis.Redis.from_url(redis_url, socket_timeout=5)
            self._take = self._redis.register_script(_TAKE_SLOT)

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._local:
            token = self._take_shared()
            try:
                yield
            finally:
                self._give_back(token)

    def _take_shared(self) -> str | None:
        if self._redis is None:
            return None
        import redis

        token, wait = uuid.uuid4().hex, 0.01
        try:
            while not self._take(keys=[SLOTS_KEY], args=[self.hold_ms, self.total, token]):
                time.sleep(wait)
                wait = min(0.1, wait * 1.5)
        except redis.RedisError as exc:
            log.warning("model slots: Redis did not answer (%s); this process's own cap holds alone", exc)
            return None
        return token

    def _give_back(self, token: str | None) -> None:
        if token is None or self._redis is None:
            return
        import redis

        try:
            self._redis.zrem(SLOTS_KEY, token)
        except redis.RedisError as exc:  # its time runs out instead
            log.warning("model slots: could not give a slot back (%s)", exc)


def model_slots() -> ModelSlots:
    """This process's slots for the current settings (MODEL_CONCURRENCY; with REDIS_URL,
    MODEL_CONCURRENCY_TOTAL across processes, each slot held at most the longest a call may take)."""
    hold = settings.OPENAI_TIMEOUT_SECONDS * (settings.OPENAI_MAX_RETRIES + 1) + 30  # the client's retries wait too
    return _slots(
        max(1, settings.MODEL_CONCURRENCY), settings.MODEL_CONCURRENCY_TOTAL, settings.REDIS_URL, int(hold * 1000)
    )


@functools.lru_cache(maxsize=8)
def _slots(limit: int, total: int, redis_url: str, hold_ms: int) -> ModelSlots:
    return ModelSlots(limit=limit, total=total, redis_url=redis_url, hold_ms=hold_ms)
