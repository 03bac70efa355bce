"""gunicorn with the project's own configuration (deploy/gunicorn.conf.py: threaded workers) in its own
processes, on the test's database, for tests about "every process": its access log names the worker
(pid) that answered each request, so a test can see that both workers answered."""

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.cluster import ROOT, cluster_env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Gunicorn:
    process: subprocess.Popen
    port: int
    access_log: Path
    error_log: Path
    env: dict

    def call(self, method: str, path: str, body=None, *, key: str | None = None) -> tuple[int, object]:
        """One request on a new connection (so the kernel hands it to either worker)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Connection": "close"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            payload = response.read()
        finally:
            connection.close()
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload.decode(errors="replace")
        return response.status, parsed

    def answers_by_worker(self) -> list[tuple[int, int]]:
        """(worker pid, status) of every request so far, in order."""
        rows = []
        for line in self.access_log.read_text().splitlines():
            pid, _, status = line.partition(" ")
            pid = pid.strip("<>")  # gunicorn writes %(p)s as <pid>
            if pid.isdigit() and status.strip().isdigit():
                rows.append((int(pid), int(status.strip())))
        return rows

    def manage(self, code: str) -> str:
        """`manage.py shell -c CODE` with the server's environment: another process on the same
        database and Redis."""
        result = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", code],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"manage.py shell exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
        return result.stdout


def start_gunicorn(tmp_path: Path, *, workers: int = 2, redis_url: str | None = None, **extra) -> Gunicorn:
    """Start gunicorn (`deploy/gunicorn.conf.py`, `workers` workers) with the test settings on this
    test's database; with `redis_url`, django-q, the cache, the throttle and the key generation use
    that Redis. Waits until it answers /healthz."""
    port = free_port()
    env = cluster_env(redis_url, **extra)
    env.update(
        GUNICORN_BIND=f"127.0.0.1:{port}",
        WEB_CONCURRENCY=str(workers),
        Q_SYNC="1",
        LOG_LEVEL="WARNING",
        PYTHONPATH=str(ROOT),
    )
    if redis_url:
        env["TEST_SHARED_CACHE"] = "1"
    access_log, error_log = tmp_path / "access.log", tmp_path / "error.log"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "deploy/gunicorn.conf.py",
            "--access-logfile",
            str(access_log),
            "--access-logformat",
            "%(p)s %(s)s",
            "--error-logfile",
            str(error_log),
            "agentnava_site.wsgi",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    server = Gunicorn(process, port, access_log, error_log, env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"gunicorn exited {process.returncode}:\n{_tail(error_log)}")
        with contextlib.suppress(OSError):
            if server.call("GET", "/healthz")[0] == 200:
                return server
        time.sleep(0.2)
    stop_gunicorn(server)
    raise AssertionError(f"gunicorn did not answer within 60 s:\n{_tail(error_log)}")


def stop_gunicorn(server: Gunicorn, timeout: float = 30) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.process.pid, signal.SIGTERM)
    try:
        server.process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait()


def _tail(path: Path) -> str:
    return path.read_text()[-3000:] if path.exists() else ""
