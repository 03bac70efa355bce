"""The real Redis for multi-node tests: its own database number (TEST_REDIS_URL, default db 9, and
one more per pytest-xdist worker: 9 for gw0, 10 for gw1, ... 12 for gw3) so nothing collides with a developer's
Redis or with the other worker's tests. Skipped when Redis does not answer, unless
REQUIRE_REDIS=1 (CI), where that fails the test instead."""

import os
import subprocess
import sys
import time

from tests.cluster import ROOT, cluster_env

_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL", f"redis://127.0.0.1:6379/{9 + _WORKER}")


def manage(*args, redis_url=None, code=None, check=True, timeout=120):
    """Run `manage.py ARGS` (or `manage.py shell -c CODE`) beside the cluster: same database, same broker."""
    argv = [sys.executable, "manage.py", *(("shell", "-c", code) if code else args)]
    result = subprocess.run(
        argv, cwd=ROOT, env=cluster_env(redis_url), capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and result.returncode != 0:
        raise AssertionError(f"{argv[2:]} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def wait_for(predicate, *, what, timeout=120, clusters=(), interval=0.5):
    """Poll until `predicate()` is truthy; fail with the clusters' logs if a cluster died or time ran out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        for process, log in clusters:
            if process.poll() is not None:
                log.seek(0)
                raise AssertionError(f"a cluster exited while waiting for {what}:\n{log.read()[-3000:]}")
        time.sleep(interval)
    logs = ""
    for _, log in clusters:
        log.seek(0)
        logs += log.read()[-2000:] + "\n---\n"
    raise AssertionError(f"timed out waiting for {what}\n{logs}")


def writer_answer(body):
    """The fake model as the memory writer: in a quiet-window run, add one line citing the first
    message; in review (Apply), replace line 1 with a shorter line."""
    import json

    from tests.fake_openai import chat_json

    payload = json.loads(body["messages"][-1]["content"])
    if payload.get("mode") == "review":
        ops = [{"op": "replace", "line": 1, "text": "Prefers email.", "sources": []}] if payload["lines"] else []
    else:
        ops = [
            {"op": "add", "line": None, "text": "Prefers email over phone.", "sources": [payload["messages"][0]["id"]]}
        ]
    return chat_json({"operations": ops})


def model_env(fake):
    """What a cluster needs to use the fake OpenAI-compatible server as its model."""
    return {
        "AGENTNAVA_ENGINE": "openai",
        "OPENAI_API_KEY": "sk-test-not-real",
        "OPENAI_BASE_URL": fake.base_url,
        "OPENAI_TIMEOUT_SECONDS": "10",
        "OPENAI_MAX_RETRIES": "0",
    }
