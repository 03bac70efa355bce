"""Counters that every process adds to: the web workers, the clusters' workers, on every machine.

With REDIS_URL set they live in one Redis hash (HINCRBY is atomic), so /metrics on any node shows
the whole deployment's counts. Without Redis (the one-machine demo) they live in this process's
memory and /metrics shows this process only.

Labels are codes from fixed lists (a run's kind, a status, a guard's reason, an error code): never
an id, a name or any text of a person.
"""

import re
import threading

from django.conf import settings

HASH_KEY = "agentnava:metrics"
SAFE_LABEL = re.compile(r"^[a-zA-Z0-9_.:+-]{1,64}$")  # codes only; anything else is counted as "other"

_local: dict[str, float] = {}  # ints stay ints: 0 + 1 is 1
_lock = threading.Lock()
_clients: dict = {}  # one client per REDIS_URL: a changed setting never reaches the old server


def _redis():
    url = getattr(settings, "REDIS_URL", "")
    if not url:
        return None
    client = _clients.get(url)
    if client is None:
        import redis

        client = _clients[url] = redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
    return client


def field(name: str, **labels) -> str:
    parts = [name] + [
        f"{key}={value if SAFE_LABEL.match(str(value)) else 'other'}" for key, value in sorted(labels.items())
    ]
    return "|".join(parts)


def parse(key: str) -> tuple[str, dict]:
    name, *pairs = key.split("|")
    return name, dict(pair.split("=", 1) for pair in pairs)


def add(name: str, amount: float = 1, **labels) -> None:
    """Add to a counter. Never raises: a metric must not break a request or a task."""
    key = field(name, **labels)
    try:
        client = _redis()
        if client is None:
            with _lock:
                _local[key] = _local.get(key, 0) + amount
        elif isinstance(amount, int):
            client.hincrby(HASH_KEY, key, amount)
        else:
            client.hincrbyfloat(HASH_KEY, key, amount)
    except Exception:  # noqa: BLE001, S110  (Redis away: the count is lost, the work goes on)
        pass


LATENCY_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


def observe(name: str, seconds: float, **labels) -> None:
    """A histogram as counters: one per bucket it falls in (cumulative), plus sum and count."""
    for le in LATENCY_BUCKETS:
        if seconds <= le:
            add(f"{name}_bucket", le=str(le), **labels)
    add(f"{name}_bucket", le="+Inf", **labels)
    add(f"{name}_sum", float(seconds), **labels)
    add(f"{name}_count", **labels)


def snapshot() -> dict[str, float]:
    client = _redis()
    if client is None:
        with _lock:
            return dict(_local)
    return {key.decode(): float(value) for key, value in client.hgetall(HASH_KEY).items()}


def reset() -> None:
    """Tests only."""
    client = _redis()
    if client is None:
        with _lock:
            _local.clear()
    else:
        client.delete(HASH_KEY)
