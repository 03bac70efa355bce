"""What the sync and the async client share: how a call becomes a request, when it is tried again,
and how an answer becomes a result or an error. No I/O here: `client.py` and `async_client.py`
send the request and sleep, each its own way.

Retries: a request that got no answer (the connection failed, dropped or timed out), or got 429,
500, 502, 503 or 504, is sent again after a backoff (or the server's `Retry-After`), at most
`max_retries` times, but only when sending it twice cannot do the work twice: a GET, or a write that
carries an `Idempotency-Key` (the server then answers a repeat with the first answer, without doing
it again). The client puts a new key on every write it makes, so its writes are retried too; the
same key is sent on each try of one call. A 409 `idempotency_key_in_use` (the first try is still
being answered) is waited out the same way."""

from __future__ import annotations

import email.utils
import json
import os
import random
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

import httpx

from agentnava.errors import APIConnectionError, error_for
from agentnava.types import api_name

__version__ = "0.1.0"

API_PREFIX = "/api/v1"
DEFAULT_BASE_URL = "https://agentnava.com"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: The longest wait between two tries; a Retry-After above it is not waited out (the error is raised).
MAX_RETRY_WAIT = 60.0


class _NoBody:
    def __repr__(self) -> str:
        return "NO_BODY"


NO_BODY: Any = _NoBody()


def segment(value: object) -> str:
    """One path segment, whatever it holds ('bob/memory' is one person, not bob's memory)."""
    return quote(str(value), safe="")


def query(**params: object) -> str:
    """A query string of the params that are set; times as ISO 8601."""
    pairs = []
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, bool):
            value = "true" if value else "false"
        pairs.append((name, str(value)))
    return f"?{urlencode(pairs)}" if pairs else ""


def camel_keys(value: Mapping[str, Any]) -> dict[str, Any]:
    """A mapping with its keys in the API's camelCase (one level: the values are left alone)."""
    return {api_name(key): item for key, item in value.items()}


def body_of(**fields: Any) -> dict[str, Any]:
    """A request body of the fields that are set, named the API's way."""
    return {api_name(name): value for name, value in fields.items() if value is not None}


@dataclass(frozen=True)
class Prepared:
    method: str
    url: str
    headers: dict[str, str]
    content: bytes | None

    @property
    def retryable(self) -> bool:
        return self.method in SAFE_METHODS or "Idempotency-Key" in self.headers


class Core:
    """A client's settings and the steps of a call that need no I/O."""

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None,
        max_retries: int,
        idempotency_keys: bool,
    ) -> None:
        api_key = api_key if api_key is not None else os.environ.get("AGENTNAVA_API_KEY")
        if not api_key:
            raise TypeError("AgentNava needs an api_key (or AGENTNAVA_API_KEY in the environment).")
        root = (base_url or os.environ.get("AGENTNAVA_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.base_url = root if root.endswith(API_PREFIX) else root + API_PREFIX
        self.api_key = api_key
        self.max_retries = max(0, int(max_retries))
        self.idempotency_keys = idempotency_keys

    def prepare(
        self,
        method: str,
        path: str,
        body: Any = NO_BODY,
        *,
        headers: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> Prepared:
        method = method.upper()
        sent = {
            "Authorization": f"Bearer {self.api_key}",
            "Accept": "application/json",
            "User-Agent": f"agentnava-python/{__version__}",
        }
        content = None
        if body is not NO_BODY:
            sent["Content-Type"] = "application/json"
            content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        if idempotency_key is None and self.idempotency_keys and method in WRITE_METHODS:
            idempotency_key = str(uuid.uuid4())
        if idempotency_key is not None:
            sent["Idempotency-Key"] = idempotency_key
        sent.update(headers or {})
        if not path.startswith("/"):
            path = "/" + path
        return Prepared(method=method, url=self.base_url + path, headers=sent, content=content)

    def wait_after_failure(self, prepared: Prepared, attempt: int) -> float | None:
        """Seconds to wait before trying again after no answer, or None: give up."""
        if not prepared.retryable or attempt >= self.max_retries:
            return None
        return backoff(attempt)

    def wait_after_answer(self, prepared: Prepared, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before trying again after this answer, or None: it is the answer."""
        in_use = response.status_code == 409 and error_code(response) == "idempotency_key_in_use"
        if response.status_code not in RETRY_STATUSES and not in_use:
            return None
        if not prepared.retryable or attempt >= self.max_retries:
            return None
        told = retry_after(response)
        if told is None:
            return backoff(attempt)
        return told if told <= MAX_RETRY_WAIT else None

    def result(self, response: httpx.Response) -> Any:
        """The answer's JSON (None for 204 or an empty body), or the API's error raised."""
        payload: Any = None
        if response.status_code != 204 and response.content:
            try:
                payload = response.json()
            except ValueError:
                payload = None
        if response.is_success:
            return payload
        raise error_for(response.status_code, payload, retry_after(response))

    @staticmethod
    def no_answer(prepared: Prepared, exc: Exception) -> APIConnectionError:
        return APIConnectionError(
            code="connection_error",
            status=0,
            message=f"{prepared.method} {prepared.url}: no answer ({type(exc).__name__}: {exc})",
        )


def backoff(attempt: int) -> float:
    """0.5 s, 1 s, 2 s, ... up to 8 s, each less a random quarter (so many clients do not retry in step)."""
    base: float = min(8.0, 0.5 * 2.0**attempt)
    return base * (1 - random.random() / 4)


def retry_after(response: httpx.Response) -> float | None:
    """The Retry-After header in seconds (a number or an HTTP date), or None."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_code(response: httpx.Response) -> str | None:
    try:
        payload = response.json()
    except ValueError:
        return None
    error = payload.get("error") if isinstance(payload, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None
