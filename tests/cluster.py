"""A real django-q cluster in its own process, on the test's own database (ORM broker)."""
import os
import subprocess
import sys
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def start_cluster(log_path):
    """Start `manage.py qcluster` with the test settings pointed at this test's database; its output
    goes to `log_path` (a pipe nobody reads would block it)."""
    db = connection.settings_dict
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "agentnava_site.settings_test", "Q_SYNC": "0"}
    if db["ENGINE"].endswith("postgresql"):
        env["DATABASE_URL"] = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    else:
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    env.pop("REDIS_URL", None)
    log = open(log_path, "w+")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"], cwd=ROOT, env=env, start_new_session=True, stdout=log, stderr=subprocess.STDOUT
    )
    return process, log


def stop_cluster(process, log):
    os.killpg(process.pid, 15)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.wait()
    log.close()
