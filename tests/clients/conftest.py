"""A live dev server for the Python client's tests, as an integrator's code meets it: `manage.py
runserver` on a free loopback port with a fresh SQLite database (migrated here), a team, an API key
and an agent made with the operator commands, as tests/js/agentnava_client.test.mjs does. The client
is imported from clients/python as `pip install ./clients/python` would install it."""

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.gunicorn import free_port

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "python"
if str(CLIENT) not in sys.path:
    sys.path.insert(0, str(CLIENT))


@dataclass
class LiveServer:
    base_url: str
    port: int
    api_key: str
    agent_id: str
    env: dict

    def manage(self, *args: str) -> str:
        """A management command on the server's database; its last line of output."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""

    def shell(self, code: str) -> str:
        return self.manage("shell", "-c", code)


def readme_python_snippets(server: LiveServer) -> list[str]:
    """The README's Python blocks of its Integration section, with this server's address and agent (the
    key they read from AGENTNAVA_API_KEY, as `export AGENTNAVA_API_KEY=$(make key)` sets it)."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Integration", 1)[1].split("\n## ", 1)[0]
    return [
        block.replace('"http://127.0.0.1:8000"', repr(server.base_url)).replace("agt_493fb4f0cf13", server.agent_id)
        for block in re.findall(r"```python\n(.*?)```", section, re.S)
    ]


def server_env(workdir: Path) -> dict:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST", "DJANGO_")) and key not in ("DATABASE_URL", "REDIS_URL", "TEST_REDIS_URL")
    }
    env.update(
        DEBUG="1",
        DATABASE_URL=f"sqlite:///{workdir / 'db.sqlite3'}",
        AGENTNAVA_ENGINE="offline",
        OPENAI_API_KEY="",
        REDIS_URL="",
        Q_SYNC="1",  # webhook deliveries are sent inline: no cluster beside this server
        WEBHOOKS_ALLOW_HTTP="1",  # the webhook test's receiver is on 127.0.0.1
        WEBHOOKS_ALLOW_PRIVATE="1",
        API_RATE_PER_KEY="1000/minute",
        DJANGO_SETTINGS_MODULE="agentnava_site.settings",
    )
    return env


@pytest.fixture(scope="session")
def dev_server(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("python-client")
    env = server_env(workdir)
    server = LiveServer(base_url="", port=0, api_key="", agent_id="", env=env)
    server.manage("migrate", "--noinput")
    made = server.shell(
        "from django.core.management import call_command; from agents.models import Team; "
        "from agents.services import agent_create; import io; out = io.StringIO(); "
        "call_command('create_team', 'pyco', '--plan', 'team', '--owner', 'owner@pyco.test', stdout=io.StringIO()); "
        "call_command('create_api_key', '--team', 'pyco', stdout=out); "
        "agent = agent_create(team=Team.objects.get(slug='pyco'), name='Support', "
        "config={'actions': [{'name': 'renew_plan', 'label': 'Renewed the plan'}]}); "
        "print(out.getvalue().strip().splitlines()[-1], agent.public_id)"
    )
    server.api_key, server.agent_id = made.split()
    server.port = free_port()
    server.base_url = f"http://127.0.0.1:{server.port}"
    log = workdir / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{server.port}", "--noreload"],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{server.base_url}/healthz", timeout=2).status_code == 200:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"The dev server did not start:\n{log.read_text()[-4000:]}")
            time.sleep(0.1)
        yield server
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)


class DroppingProxy:
    """A TCP proxy in front of the dev server that can drop answers the way a network does: with
    `drop_next()`, the next request goes through and the server answers it (the work is done), but
    the connection is closed before a byte of that answer reaches the client."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.lock = threading.Lock()
        self.to_drop = 0
        self.dropped = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def drop_next(self, count: int = 1) -> None:
        with self.lock:
            self.to_drop = count

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))

        def requests_up() -> None:
            with contextlib.suppress(OSError):
                while data := client.recv(65536):
                    upstream.sendall(data)

        threading.Thread(target=requests_up, daemon=True).start()
        try:
            while data := upstream.recv(65536):
                with self.lock:
                    drop = self.to_drop > 0
                    if drop:
                        self.to_drop -= 1
                        self.dropped += 1
                if drop:
                    return  # the server has answered: the client never hears it
                client.sendall(data)
        except OSError:
            pass
        finally:
            for end in (client, upstream):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()


@pytest.fixture
def dropping_proxy(dev_server):
    proxy = DroppingProxy(dev_server.port)
    yield proxy
    proxy.close()
