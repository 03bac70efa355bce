"""A real django-q cluster in its own process, on the test's own database (ORM broker)."""

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def cluster_env(redis_url=None, **extra):
    """The environment of a cluster (or of a command beside it) on this test's database: the ORM
    broker, or Redis at `redis_url`."""
    db = connection.settings_dict
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "agentnava_site.settings_test", "Q_SYNC": "0", **extra}
    if db["ENGINE"].endswith("postgresql"):
        env["DATABASE_URL"] = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    else:
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def start_cluster(log_path, redis_url=None, **extra):
    """Start `manage.py qcluster` with the test settings pointed at this test's database; its output
    goes to `log_path` (a pipe nobody reads would block it)."""
    env = cluster_env(redis_url, **extra)
    log = open(log_path, "w+")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return process, log


def stop_cluster(process, log, timeout=30):
    """SIGTERM to the cluster's process group (woken first, in case a test stopped it), SIGKILL
    after `timeout`, then SIGKILL to whatever of the group is left."""
    for sig in (signal.SIGCONT, signal.SIGTERM):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    log.close()
