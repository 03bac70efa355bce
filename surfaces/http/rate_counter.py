"""One atomic counter per name and window, for the per-key API limit: how many hits the window has
had with this one, and the seconds until it ends.

With Redis as the default cache (REDIS_URL) it is INCR and PEXPIRE in one Lua script, so every
thread of every process shares one exact count. Otherwise the count lives in the default cache of
this process, read and written under a lock: exact across its threads, counted per process."""

import math
import threading
import time

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache

# KEYS[1]: the counter; ARGV[1]: the window in ms. The first hit of a window starts its clock.
_HIT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}
"""
_lock = threading.Lock()


def hit(name: str, *, window_seconds: float) -> tuple[int, float]:
    """Count one hit on `name`; answer (hits in this window so far, seconds until the window ends)."""
    cache = caches["default"]  # the backend itself (`django.core.cache.cache` is a proxy to it)
    if isinstance(cache, RedisCache):
        return _hit_redis(cache, name, window_seconds)
    return _hit_local(cache, name, window_seconds)


def _hit_redis(cache: RedisCache, name: str, window_seconds: float) -> tuple[int, float]:
    key = cache.make_and_validate_key(name)
    client = cache._cache.get_client(key, write=True)  # Django's RedisCache keeps its redis-py client here
    count, ttl_ms = client.eval(_HIT, 1, key, max(1, int(window_seconds * 1000)))
    return int(count), math.ceil(int(ttl_ms) / 1000)


def _hit_local(cache, name: str, window_seconds: float) -> tuple[int, float]:
    now = time.time()
    with _lock:
        ends_at, count = cache.get(name) or (0.0, 0)
        if ends_at <= now:
            ends_at, count = now + window_seconds, 0
        count += 1
        cache.set(name, (ends_at, count), timeout=math.ceil(ends_at - now))
    return count, math.ceil(ends_at - now)
