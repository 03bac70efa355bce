"""Benchmark of the REST API at 1,000,000 memories (not a test: it prints figures).

    python bench/api.py            # PostgreSQL on 127.0.0.1:5432 as postgres (trust); needs wrk (apt-get install wrk)

In one run, on a scratch PostgreSQL database that it creates and drops at the end, with load from
wrk (a C load generator in its own process, not Python threads sharing the server's cores):
1. `memory.get()` on random end users, through gunicorn (2 sync workers), against a bare Django + DRF
   app (`bench/bare_api.py`: one `.values()` query, no serializer, no authentication) on the same
   tables and indexes, served the same way in the same run: the ratio of requests per second;
2. `agent.memories({limit: 50})`'s first page against the bare app's keyset page (the same 50 rows'
   text and times from one keyset query): the same ratio;
3. a page 900,000 rows deep (a cursor far in) against the bare app's page as deep, and against the
   first (keyset on (updated_at, id) keeps it near 1);
4. chat start, and a turn of an open chat, with memory against without: time and queries, in
   process through the whole stack.

Rows are made with SQL `generate_series`: 1,000,000 memories across 10 agents of one team (one
agent holds 910,000 so that a page 900,000 deep exists), each with its end user; 5,000 of those end
users also have a conversation with two messages and a consent, so memory.get's counts have rows to
count.
"""

import argparse
import http.client
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ADMIN_URL = os.environ.get("BENCH_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
DB_NAME = os.environ.get("BENCH_DB", "agentnava_bench_api")
DB_URL = ADMIN_URL.rsplit("/", 1)[0] + "/" + DB_NAME
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
    return (
        f"{os.cpu_count()} cores, {mem_kib / 1024 / 1024:.0f} GiB, Python {platform.python_version()}, PostgreSQL {pg}"
    )


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
        # Each memory's updated_at differs (unique per agent, as the memory service keeps it).
        cursor.execute(
            "INSERT INTO memory_memory (agent_id, end_user_id, text, created_at, updated_at, read_up_to, last_run, "
            "  external_id, last_chat_at, agreed_at, conversations) "
            "SELECT eu.agent_id, eu.id, %s, now() - interval '30 days', "
            "       now() - eu.id * interval '17 ms', "
            "       now() - interval '1 day', "
            "       jsonb_build_object('at', now() - interval '1 day', 'added', 1, 'replaced', 0, 'removed', 0), "
            "       eu.external_id, eu.last_chat_at, NULL, 0 "
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
        # The R21 fields kept on the memory row (memory.store.counters), as those chats and consents leave them.
        cursor.execute(
            "UPDATE memory_memory m SET conversations = 1, agreed_at = c.agreed_at "
            "FROM consent_consent c WHERE c.end_user_id = m.end_user_id AND c.agent_id = %s",
            [made[0].pk],
        )
        for table in ("agents_enduser", "memory_memory", "agents_conversation", "agents_message", "consent_consent"):
            cursor.execute(f"ANALYZE {table}")
        cursor.execute("SELECT count(*) FROM memory_memory")
        counted = cursor.fetchone()[0]
    print(f"built {counted:,} memories across {agents} agents ({big:,} on one) in {time.perf_counter() - t0:.0f} s")
    return {"team": team, "agents": made, "keys": keys, "small": small, "big": big}


# --- HTTP through gunicorn, load from wrk ---------------------------------------------------------


def start_gunicorn(
    port: int, workers: int, rate: str, settings_module: str = "agentnava_site.settings"
) -> subprocess.Popen:
    """gunicorn (sync workers) with the project's settings, or with the bare comparison's."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": settings_module,
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": DB_URL,
        "DEBUG": "",
        "SECRET_KEY": "bench-only-secret-key-0123456789abcdefghijklmnopqrstuvwxyz",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "API_RATE_PER_KEY": rate,
        "LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "agentnava_site.wsgi",
            "-w",
            str(workers),
            "-b",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
            "--no-control-socket",  # two masters at once (and other gunicorns here) would share one socket path
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    probe = "/healthz" if settings_module == "agentnava_site.settings" else "/bare/agents/0/memories"
    for _ in range(300):
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn ({settings_module}) exited with {process.returncode}")
        try:
            status, _ = request(port, "GET", probe, None, timeout=2)
            if status == 200:
                return process
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("gunicorn did not start")


def stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def request(port: int, method: str, path: str, key: str | None, timeout: float = 30) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def wrk(port: int, lua: str, seconds: float, key: str | None, threads: int, connections: int) -> dict:
    """Run wrk (C, its own process: it does not share the interpreter with the server) against the
    server with a Lua `request` function; answers req/s, p50/p99 in ms and the non-2xx count."""
    script = Path(tempfile.mkstemp(prefix="bench-api-", suffix=".lua")[1])
    script.write_text(lua)
    try:
        command = [
            "wrk",
            f"-t{threads}",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            "--latency",
            "-s",
            str(script),
        ]
        if key:
            command += ["-H", f"Authorization: Bearer {key}"]
        out = subprocess.run(command + [f"http://127.0.0.1:{port}"], capture_output=True, text=True, check=True).stdout
    finally:
        script.unlink()

    def ms(label):
        match = re.search(rf"^\s*{label}\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50": ms("50%"),
        "p99": ms("99%"),
        "errors": int(non_2xx.group(1)) if non_2xx else 0,
    }


def lua_random_gets(prefix: str, agents: list[tuple[str, int]], suffix: str) -> str:
    """A wrk script: each request a random end user of a random agent."""
    table = ", ".join(f'{{"{agent}", {count}}}' for agent, count in agents)
    return (
        f"local agents = {{{table}}}\n"
        "math.randomseed(7)\n"
        "request = function()\n"
        "  local a = agents[math.random(#agents)]\n"
        f'  return wrk.format("GET", "{prefix}" .. a[1] .. "/end-users/u_" .. math.random(a[2]) .. "{suffix}")\n'
        "end\n"
    )


def lua_fixed(path: str) -> str:
    return f'request = function() return wrk.format("GET", "{path}") end\n'


def side_by_side(label: str, ours: dict, bare: dict) -> None:
    print(
        f"{label}: project {ours['rps']:.0f} req/s (p50 {ours['p50']:.1f} ms, p99 {ours['p99']:.1f} ms, non-2xx "
        f"{ours['errors']}) against bare DRF {bare['rps']:.0f} req/s (p50 {bare['p50']:.1f} ms, non-2xx "
        f"{bare['errors']}): ratio {ours['rps'] / bare['rps']:.2f}"
    )


def http_figures(ports: dict, data: dict, args) -> None:
    """memory.get, a first page and a page 900,000 deep against the bare app's, and the deep page
    against the first; after a warm-up, each measured back to back, --rounds times alternating, and
    the best of each kept."""
    from memory.models import Memory
    from memory.store.selectors import memory_cursor

    key = data["keys"][0]
    agents = data["agents"]
    counts = [(data["big"] if i == 0 else data["small"]) for i in range(len(agents))]
    ours_get = lua_random_gets(
        "/api/v1/agents/", [(a.public_id, c) for a, c in zip(agents, counts, strict=True)], "/memory"
    )
    bare_get = lua_random_gets(
        "/bare/agents/", [(str(a.pk), c) for a, c in zip(agents, counts, strict=True)], "/memory"
    )
    big = agents[0]
    first = f"/api/v1/agents/{big.public_id}/memories?limit=50"
    row = Memory.objects.filter(agent=big).order_by("-updated_at", "-id")[args.deep - 1 : args.deep].get()
    deep = f"{first}&cursor={memory_cursor(row)}"
    status, body = request(ports["ours"], "GET", deep, key)
    assert status == 200 and body.count(b'"endUserId"') == 50, body[:300]
    bare_first = f"/bare/agents/{big.pk}/memories?limit=50"
    bare_deep = f"{bare_first}&before_id={row.pk}&before_at={quote(row.updated_at.isoformat())}"
    for path in (bare_first, bare_deep):
        status, body = request(ports["bare"], "GET", path, None)
        assert status == 200 and body.count(b'"external_id"') == 50, body[:300]
    load = dict(seconds=args.seconds, threads=args.threads, connections=args.connections)
    for port, lua, with_key in ((ports["ours"], lua_fixed(first), True), (ports["bare"], lua_fixed(bare_first), False)):
        wrk(port, lua, key=key if with_key else None, **{**load, "seconds": 3})  # warm-up: each worker's imports
    results: dict[str, list[dict]] = {}
    for _ in range(args.rounds):
        for name, port, lua, with_key in (
            ("get", ports["ours"], ours_get, True),
            ("bare_get", ports["bare"], bare_get, False),
            ("first", ports["ours"], lua_fixed(first), True),
            ("bare_first", ports["bare"], lua_fixed(bare_first), False),
            ("deep", ports["ours"], lua_fixed(deep), True),
            ("bare_deep", ports["bare"], lua_fixed(bare_deep), False),
        ):
            results.setdefault(name, []).append(wrk(port, lua, key=key if with_key else None, **load))
    best = {name: max(runs, key=lambda r: r["rps"]) for name, runs in results.items()}
    side_by_side(f"memory.get (a random end user of {sum(counts):,})", best["get"], best["bare_get"])
    side_by_side("agent.memories({limit: 50}), first page", best["first"], best["bare_first"])
    side_by_side(f"agent.memories({{limit: 50}}), a page {args.deep:,} rows deep", best["deep"], best["bare_deep"])
    print(
        f"agent.memories page {args.deep:,} rows deep: {best['deep']['rps']:.0f} req/s against the first page's "
        f"{best['first']['rps']:.0f}: time ratio deep/first {best['first']['rps'] / best['deep']['rps']:.2f}"
    )


# --- Chat start, with and without memory --------------------------------------------------------


def chat_figures(data: dict, n: int) -> None:
    """Chat start, and a turn of an open chat, with memory against without: through the whole
    Django stack in this process (the test client), so queries can be counted. Interleaved, twice,
    to even out warm-up; medians."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    agent = data["agents"][0]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {data['keys'][0]}", HTTP_HOST="127.0.0.1")
    start_path = f"/api/v1/agents/{agent.public_id}/conversations"
    starts: dict[bool, tuple] = {}
    turns: dict[bool, tuple] = {}
    for memory in (True, False, True, False):
        start_times, start_queries, turn_times, turn_queries = [], [], [], []
        for i in range(n):
            body = {"endUserId": f"u_{1 + (i * 7919) % data['big']}", "memory": memory}
            with CaptureQueriesContext(connection) as captured:
                t0 = time.perf_counter()
                answer = client.post(start_path, body, content_type="application/json")
                start_times.append(time.perf_counter() - t0)
            assert answer.status_code == 201 and answer.json()["usesMemory"] is memory, answer.content[:200]
            start_queries.append(len(captured.captured_queries))
            send_path = f"/api/v1/conversations/{answer.json()['id']}/messages"
            client.post(send_path, {"text": "Hello"}, content_type="application/json")  # the chat's first turn
            with CaptureQueriesContext(connection) as captured:
                t0 = time.perf_counter()
                answer = client.post(send_path, {"text": "Thanks, that helps."}, content_type="application/json")
                turn_times.append(time.perf_counter() - t0)
            assert answer.status_code == 201, answer.content[:200]
            turn_queries.append(len(captured.captured_queries))
        starts[memory] = (statistics.median(start_times), statistics.median(start_queries))
        turns[memory] = (statistics.median(turn_times), statistics.median(turn_queries))
    for label, pair in (("chat start", starts), ("a turn of an open chat", turns)):
        (t_on, q_on), (t_off, q_off) = pair[True], pair[False]
        print(
            f"{label} with memory: {q_on:.0f} queries, {t_on * 1000:.2f} ms; without: {q_off:.0f} queries, "
            f"{t_off * 1000:.2f} ms (medians of {n}); with/without: time {t_on / t_off:.2f}x, {q_on - q_off:+.0f} queries"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--deep", type=int, default=900_000)
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn sync workers, for each server")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--connections", type=int, default=16, help="wrk connections")
    parser.add_argument("--seconds", type=float, default=10, help="each wrk run")
    parser.add_argument("--rounds", type=int, default=3, help="each pair measured this many times, the best kept")
    parser.add_argument("--samples", type=int, default=200, help="chat starts and turns, in process")
    parser.add_argument("--rate", default="1000000000/hour", help="API_RATE_PER_KEY for the server (on, not reached)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()
    big = args.deep + (args.memories // 100)
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed: apt-get install -y wrk")

    admin(f'DROP DATABASE IF EXISTS "{DB_NAME}"')
    admin(f'CREATE DATABASE "{DB_NAME}"')
    servers = []
    try:
        os.environ.update(
            {
                "DATABASE_URL": DB_URL,
                "DEBUG": "",
                "SECRET_KEY": "bench-only-secret-key-0123456789abcdefghijklmnop",
                "ALLOWED_HOSTS": "127.0.0.1",
                "SECURE_SSL_REDIRECT": "0",
                "API_RATE_PER_KEY": args.rate,
                "LOG_LEVEL": "WARNING",
                "DJANGO_SETTINGS_MODULE": "agentnava_site.settings",
            }
        )
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, check=True)
        import django

        django.setup()
        print(f"machine: {machine()}")
        data = build(args.memories, big, args.agents)
        ports = {"ours": free_port(), "bare": free_port()}
        servers.append(start_gunicorn(ports["ours"], args.workers, args.rate))
        servers.append(start_gunicorn(ports["bare"], args.workers, args.rate, settings_module="bench.bare_api"))
        print(
            f"gunicorn: {args.workers} sync workers for each of the project and the bare DRF app; "
            f"wrk -t{args.threads} -c{args.connections} -d{args.seconds:g}s; per-key rate {args.rate}"
        )
        http_figures(ports, data, args)
        for server in servers:
            stop(server)
        servers = []
        chat_figures(data, args.samples)
    finally:
        for server in servers:
            stop(server)
        from django.db import connections

        connections.close_all()
        if not args.keep:
            admin(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
            print(f"dropped the scratch database {DB_NAME}")


if __name__ == "__main__":
    main()
