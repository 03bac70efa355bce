"""The model calls' cap across processes (issue 29): with REDIS_URL, at most MODEL_CONCURRENCY_TOTAL
calls in flight across every process together, and a slot whose holder died is taken back when its
time is up. Counted by the loopback model server, never timed."""

import subprocess
import sys
import textwrap

import redis

from agents import engines
from tests.cluster import ROOT, cluster_env
from tests.fake_openai import chat_json

CALLS = textwrap.dedent(
    """
    from agents.engines import concurrently, get_engine
    engine = get_engine()
    concurrently(engine, lambda n: engine.structured(task="p", system="s", payload={"n": n}, schema={}), range(12))
    """
)


def test_two_processes_share_the_cap(redis_url, fake_openai):
    """Each process may keep 3 calls in flight, and 3 across both: the server never sees a fourth,
    though it holds every call until four are there (or half a second passes)."""
    fake_openai.default = chat_json({"answer": "ok"})
    fake_openai.hold_until, fake_openai.hold_seconds = 4, 0.5
    env = cluster_env(
        redis_url,
        AGENTNAVA_ENGINE="openai",
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=fake_openai.base_url,
        OPENAI_MAX_RETRIES="0",
        OPENAI_TIMEOUT_SECONDS="10",
        MODEL_CONCURRENCY="3",
        MODEL_CONCURRENCY_TOTAL="3",
    )
    command = [sys.executable, "manage.py", "shell", "-c", CALLS]
    processes = [subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err[-2000:]
    assert len(fake_openai.requests) == 24
    assert fake_openai.most_in_flight == 3
    assert redis.from_url(redis_url).zcard(engines.SLOTS_KEY) == 0  # every slot given back


def test_a_dead_holders_slot_is_taken_back_when_its_time_is_up(redis_url, openai_engine, settings):
    settings.REDIS_URL, settings.MODEL_CONCURRENCY_TOTAL = redis_url, 1
    client = redis.from_url(redis_url)
    seconds, micros = client.time()
    now_ms = seconds * 1000 + micros // 1000
    hold_ms = engines.model_slots().hold_ms
    client.zadd(engines.SLOTS_KEY, {"a-worker-that-died": now_ms - hold_ms - 1000})  # the only slot, long held
    openai_engine.default = chat_json({"answer": "ok"})
    engine = engines.get_engine()
    assert engine.structured(task="p", system="s", payload={}, schema={}).data == {"answer": "ok"}
    assert client.zcard(engines.SLOTS_KEY) == 0  # the dead holder dropped, the call's own slot given back
