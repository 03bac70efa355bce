"""Benchmark of the REST API at 1,000,000 memories (not a test: it prints figures).

    python bench/api.py            # PostgreSQL on 127.0.0.1:5432 as postgres (trust), as in CI

In one run, on a scratch PostgreSQL database that it creates and drops at the end:
1. `agent.memories()`: the first page against a page 900,000 rows deep (keyset on
   (updated_at, id) keeps the ratio near 1), with the OFFSET query's plan for contrast;
2. `memory.get()`: p50 / p99 latency and requests per second through gunicorn, with one and with a
   bounded number of concurrent loopback clients; then again with each worker keeping its database
   connection (the project opens one per request: CONN_MAX_AGE 0);
3. chat start with memory against chat start without: queries and time per start, as ratios.

Rows are made with SQL `generate_series`: 1,000,000 memories across 10 agents of one team (one
agent holds 910,000 so that a page 900,000 deep exists), each with its end user; 5,000 of those end
users also have a conversation with two messages and a consent, so memory.get's counts have rows to
count.
"""
import argparse
import http.client
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ADMIN_URL = os.environ.get("BENCH_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
DB_NAME = os.environ.get("BENCH_DB", "agentnava_bench_api")
DB_URL = ADMIN_URL.rsplit("/", 1)[0] + "/" + DB_NAME
SCRATCH_DIRS: list[Path] = []  # settings modules written for gunicorn; removed at the end
MEMORY_TEXT = "Prefers email over phone.\nWorks from the Pune office.\nRenewed the plan on 3 Nov."


def admin(sql: str) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(sql)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def machine() -> str:
    mem_kib = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    with psycopg.connect(DB_URL) as conn:
        pg = conn.execute("SHOW server_version").fetchone()[0]
    return f"{os.cpu_count()} cores, {mem_kib / 1024 / 1024:.0f} GiB, Python {platform.python_version()}, PostgreSQL {pg}"


# --- The data ---------------------------------------------------------------------------------


def build(total: int, big: int, agents: int) -> dict:
    """The team, its key and agents through the services; the million rows through SQL."""
    from django.db import connection

    from agents import services
    from agents.models import Plan, Team

    team = Team.objects.create(slug="bench-api", name="Bench API", plan=Plan.TEAM)
    made = [
        services.agent_create(team=team, name=f"Bench {i}", config={"memorySettings": {"on": True}})
        for i in range(agents)
    ]
    keys = [services.api_key_create(team=team, name=f"bench {i}")[1] for i in range(64)]
    small = (total - big) // (agents - 1)
    t0 = time.perf_counter()
    with connection.cursor() as cursor:
        for index, agent in enumerate(made):
            count = big if index == 0 else small
            cursor.execute(
                "INSERT INTO agents_enduser (agent_id, external_id, created_at, last_chat_at) "
                "SELECT %s, 'u_' || g, now() - interval '30 days', now() - (g * interval '1 second') "
                "FROM generate_series(1, %s) g",
                [agent.pk, count],
            )
        # Each memory's updated_at differs, except 0.2% that share one (as a bulk change can make).
        cursor.execute(
            "INSERT INTO memory_memory (agent_id, end_user_id, text, created_at, updated_at, read_up_to, last_run) "
            "SELECT eu.agent_id, eu.id, %s, now() - interval '30 days', "
            "       now() - (CASE WHEN eu.id %% 10000 < 20 THEN 0 ELSE eu.id END) * interval '17 ms', "
            "       now() - interval '1 day', "
            "       jsonb_build_object('at', now() - interval '1 day', 'added', 1, 'replaced', 0, 'removed', 0) "
            "FROM agents_enduser eu JOIN agents_agent a ON a.id = eu.agent_id WHERE a.team_id = %s",
            [MEMORY_TEXT, team.pk],
        )
        cursor.execute(
            "INSERT INTO agents_conversation (public_id, agent_id, end_user_id, version_id, uses_memory, "
            "  memory_off_reason, project, source, memory_note, started_at, last_activity_at) "
            "SELECT 'convb_' || eu.id, eu.agent_id, eu.id, v.id, true, '', '', 'api', '', now() - interval '2 days', "
            "       now() - interval '2 days' "
            "FROM agents_enduser eu JOIN agents_agentversion v ON v.agent_id = eu.agent_id "
            "WHERE eu.agent_id = %s AND eu.external_id IN (SELECT 'u_' || g FROM generate_series(1, 5000) g)",
            [made[0].pk],
        )
        cursor.execute(
            "INSERT INTO agents_message (conversation_id, kind, text, created_at) "
            "SELECT c.id, k.kind, 'Hello', c.started_at FROM agents_conversation c "
            "CROSS JOIN (VALUES ('user'), ('agent')) AS k(kind) WHERE c.source = 'api' AND c.agent_id = %s",
            [made[0].pk],
        )
        cursor.execute(
            "INSERT INTO consent_consent (agent_id, end_user_id, agreed_at, source, updated_at) "
            "SELECT c.agent_id, c.end_user_id, now() - interval '3 days', 'api', now() FROM agents_conversation c "
            "WHERE c.agent_id = %s",
            [made[0].pk],
        )
        for table in ("agents_enduser", "memory_memory", "agents_conversation", "agents_message", "consent_consent"):
            cursor.execute(f"ANALYZE {table}")
        cursor.execute("SELECT count(*) FROM memory_memory")
        counted = cursor.fetchone()[0]
    print(f"built {counted:,} memories across {agents} agents ({big:,} on one) in {time.perf_counter() - t0:.0f} s")
    return {"team": team, "agents": made, "keys": keys, "small": small, "big": big}


# --- HTTP through gunicorn --------------------------------------------------------------------


def start_gunicorn(port: int, workers: int, rate: str, conn_max_age: int | None = None) -> subprocess.Popen:
    """gunicorn with the project's settings, or (conn_max_age) the same settings keeping each
    worker's database connection open that many seconds instead of opening one per request."""
    settings_module = "agentnava_site.settings"
    pythonpath = os.environ.get("PYTHONPATH", "")
    if conn_max_age is not None:
        scratch = Path(tempfile.mkdtemp(prefix="bench-api-"))
        SCRATCH_DIRS.append(scratch)
        (scratch / "bench_api_settings.py").write_text(
            "from agentnava_site.settings import *  # noqa: F403\n"
            f"DATABASES['default']['CONN_MAX_AGE'] = {conn_max_age}  # noqa: F405\n"
        )
        settings_module = "bench_api_settings"
        pythonpath = f"{scratch}:{ROOT}" + (f":{pythonpath}" if pythonpath else "")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": settings_module,
        "PYTHONPATH": pythonpath,
        "DATABASE_URL": DB_URL,
        "DEBUG": "",
        "SECRET_KEY": "bench-only-secret-key-0123456789abcdefghijklmnopqrstuvwxyz",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "API_RATE_PER_KEY": rate,
        "LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "agentnava_site.wsgi", "-w", str(workers), "-b", f"127.0.0.1:{port}",
         "--log-level", "warning"],
        cwd=ROOT, env=env, start_new_session=True,
    )
    for _ in range(300):
        try:
            status, _ = request(port, "GET", "/healthz", None)
            if status == 200:
                return process
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("gunicorn did not start")


def stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def request(port: int, method: str, path: str, key: str | None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def timed_gets(port: int, path: str, key: str, n: int) -> list[float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        status, body = request(port, "GET", path, key)
        times.append(time.perf_counter() - t0)
        assert status == 200, (status, body[:200])
    return times


def pages(port: int, data: dict, deep: int, n: int) -> None:
    from memory.api import encode_cursor
    from memory.models import Memory

    agent = data["agents"][0]
    key = data["keys"][0]
    ordered = Memory.objects.filter(agent=agent).order_by("-updated_at", "-id")
    row = ordered[deep - 1 : deep].get()  # once, to find the cursor of the row 900,000 deep
    base = f"/api/v1/agents/{agent.public_id}/memories?limit=50"
    status, body = request(port, "GET", f"{base}&cursor={encode_cursor(row)}", key)
    assert status == 200 and body.count(b'"endUserId"') == 50, body[:300]
    first = timed_gets(port, base, key, n)
    deep_times = timed_gets(port, f"{base}&cursor={encode_cursor(row)}", key, n)
    f, d = statistics.median(first), statistics.median(deep_times)
    print(f"memories: first page {f * 1000:.1f} ms, page {deep:,} rows deep {d * 1000:.1f} ms "
          f"(medians of {n}, 50 a page): ratio deep/first {d / f:.2f}")
    from django.db import connection
    from django.db.models import Q

    present = ordered.filter(text__gt="").values("id")
    keyset = present.filter(updated_at__lte=row.updated_at).filter(Q(updated_at__lt=row.updated_at) | Q(id__lt=row.pk))
    with connection.cursor() as cursor:
        sql, params = present.query.sql_with_params()
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql} LIMIT 50 OFFSET {deep}", params)
        offset_ms = cursor.fetchone()[0][0]["Execution Time"]
        sql, params = keyset[:50].query.sql_with_params()
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
        keyset_ms = cursor.fetchone()[0][0]["Execution Time"]
    print(f"memories SQL {deep:,} rows deep: OFFSET {offset_ms:.1f} ms against keyset {keyset_ms:.2f} ms "
          f"(EXPLAIN ANALYZE execution time)")


def models_q(row):
    from django.db.models import Q

    return Q(updated_at__lt=row.updated_at) | Q(id__lt=row.pk)


def load(port: int, data: dict, clients: int, seconds: float, label: str) -> None:
    """`clients` threads, each one request at a time, for `seconds`: memory.get on random end users."""
    from agents.models import Agent

    agents = list(Agent.objects.filter(team=data["team"]).order_by("id"))
    latencies: list[float] = []
    errors: list[int] = []
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def client(number: int):
        rng = random.Random(number)
        key = data["keys"][number % len(data["keys"])]
        mine = []
        while time.perf_counter() < deadline:
            index = rng.randrange(len(agents))
            agent = agents[index]
            count = data["big"] if index == 0 else data["small"]
            path = f"/api/v1/agents/{agent.public_id}/end-users/u_{rng.randint(1, count)}/memory"
            t0 = time.perf_counter()
            status, _ = request(port, "GET", path, key)
            mine.append(time.perf_counter() - t0)
            if status != 200:
                with lock:
                    errors.append(status)
        with lock:
            latencies.extend(mine)

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
    print(f"memory.get through gunicorn ({label}): {len(latencies):,} requests from {clients} concurrent loopback client(s) "
          f"in {elapsed:.1f} s = {len(latencies) / elapsed:.0f} req/s; p50 {p(0.50):.1f} ms, p99 {p(0.99):.1f} ms; "
          f"non-200: {len(errors)}")


# --- Chat start, with and without memory --------------------------------------------------------


def chat_start(data: dict, n: int) -> None:
    """Through the whole Django stack in this process (the test client), so queries can be counted."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    agent = data["agents"][0]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {data['keys'][0]}", HTTP_HOST="127.0.0.1")
    path = f"/api/v1/agents/{agent.public_id}/conversations"
    results = {}
    for memory in (True, False, True, False):  # interleaved, twice, to even out warm-up
        times, queries = [], []
        for i in range(n):
            body = {"endUserId": f"u_{1 + (i * 7919) % data['big']}", "memory": memory}
            with CaptureQueriesContext(connection) as captured:
                t0 = time.perf_counter()
                answer = client.post(path, body, content_type="application/json")
                times.append(time.perf_counter() - t0)
            assert answer.status_code == 201 and answer.json()["usesMemory"] is memory, answer.content[:200]
            queries.append(len(captured.captured_queries))
        results[memory] = (statistics.median(times), statistics.median(queries))
    (t_on, q_on), (t_off, q_off) = results[True], results[False]
    print(f"chat start with memory: {q_on:.0f} queries, {t_on * 1000:.1f} ms; without: {q_off:.0f} queries, "
          f"{t_off * 1000:.1f} ms (medians of {n}); ratio with/without: time {t_on / t_off:.2f}, queries {q_on / q_off:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--deep", type=int, default=900_000)
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--clients", type=int, default=8, help="concurrent loopback clients")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn sync workers")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--rate", default="1000000/hour", help="API_RATE_PER_KEY for the server")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()
    big = args.deep + (args.memories // 100)

    admin(f'DROP DATABASE IF EXISTS "{DB_NAME}"')
    admin(f'CREATE DATABASE "{DB_NAME}"')
    server = None
    try:
        os.environ.update(
            {"DATABASE_URL": DB_URL, "DEBUG": "", "SECRET_KEY": "bench-only-secret-key-0123456789abcdefghijklmnop",
             "ALLOWED_HOSTS": "127.0.0.1", "SECURE_SSL_REDIRECT": "0", "API_RATE_PER_KEY": args.rate,
             "LOG_LEVEL": "WARNING", "DJANGO_SETTINGS_MODULE": "agentnava_site.settings"}
        )
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, check=True)
        import django

        django.setup()
        print(f"machine: {machine()}")
        data = build(args.memories, big, args.agents)
        port = free_port()
        server = start_gunicorn(port, args.workers, args.rate)
        print(f"gunicorn: {args.workers} sync workers on 127.0.0.1:{port}; per-key rate {args.rate}")
        pages(port, data, args.deep, args.samples)
        load(port, data, 1, args.seconds / 2, "project settings: a connection per request")
        load(port, data, args.clients, args.seconds, "project settings: a connection per request")
        stop(server)
        server = start_gunicorn(port, args.workers, args.rate, conn_max_age=60)
        load(port, data, args.clients, args.seconds, "CONN_MAX_AGE=60: connections kept")
        stop(server)
        server = None
        chat_start(data, args.samples * 4)
    finally:
        if server is not None:
            stop(server)
        for scratch in SCRATCH_DIRS:
            shutil.rmtree(scratch, ignore_errors=True)
        from django.db import connections

        connections.close_all()
        if not args.keep:
            admin(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
            print(f"dropped the scratch database {DB_NAME}")


if __name__ == "__main__":
    main()
