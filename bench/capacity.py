"""Capacity with a real model's latency (not a test: it prints figures).

    python bench/capacity.py       # PostgreSQL and Redis on 127.0.0.1; needs wrk (apt-get install wrk)

The model is the loopback OpenAI-compatible server of the tests (tests/fake_openai.py), answering
every call after the latency asked, so the figures show what waiting on a model does
to the two kinds of process, not what a model costs:

0. the CPU time of one chat reply and of one writer run, in process, with the model answering at
   once (what a core can do; the other figures share the machine's cores with whatever else runs);
1. writer runs per second, in one run, for each sweep of --sweeps (by default the instant model,
   a 1 s model and a 3 s model, each at 2 cluster workers): one qcluster on Redis with Q_WORKERS
   workers (and MODEL_CONCURRENCY when given), --users end users (150) due at once, one sweep
   queued; the time from the sweep to the last memory written; then each model's runs/s over the
   instant model's at the same workers and concurrency (the CPU-bound limit on this machine, now),
   the load average beside each sweep and the resident memory of each process of the cluster;
2. with --web, chat replies per second against gunicorn workers and threads
   (deploy/gunicorn.conf.py): wrk (C, its own process) posting a message to one of 200 open chats
   over the REST API, 64 connections, each reply waiting --latency on the model.

Scratch database agentnava_bench_capacity (made and dropped; BENCH_DB names another) and Redis db 15
(flushed; BENCH_REDIS_URL names another).
"""

import argparse
import json
import os
import platform
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"
DB_NAME = os.environ.get("BENCH_DB", "agentnava_bench_capacity")
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/15")


def admin(sql: str) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(sql)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(argv, env, log_path) -> tuple[subprocess.Popen, object]:
    log = open(log_path, "w+")  # noqa: SIM115  (closed by stop())
    return subprocess.Popen(argv, cwd=ROOT, env=env, start_new_session=True, stdout=log, stderr=subprocess.STDOUT), log


def stop(process, log, timeout=30) -> None:
    for sig in (signal.SIGCONT, signal.SIGTERM):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
    log.close()


def model_answer(latency: float):
    from tests.fake_openai import chat_body, chat_json

    def answer(body):
        payload_text = body["messages"][-1]["content"]
        if "response_format" in body:  # the writer: add one line citing the first message
            payload = json.loads(payload_text)
            ops = [
                {
                    "op": "add",
                    "line": None,
                    "text": "Prefers email over phone.",
                    "sources": [payload["messages"][0]["id"]],
                }
            ]
            reply = chat_json({"operations": ops})
        else:
            reply = {"status": 200, "body": chat_body("Thanks, noted.")}
        return {**reply, "delay": latency}

    return answer


def tree_rss_kib(root_pid: int) -> list[int]:
    """VmRSS (KiB) of every process under root_pid, itself included (the qcluster's sentinel,
    monitor, pusher and workers), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    rss, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        rss.extend(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    return rss


def writer_figures(env, fake, configs, users, tmp) -> list[dict]:
    """One sweep of `users` due end users for each (model latency, cluster workers, MODEL_CONCURRENCY),
    each on its own agent and its own qcluster: runs/s from the sweep to the last memory written."""
    from datetime import timedelta

    from django.utils import timezone
    from django_q.models import Schedule
    from django_q.tasks import async_task

    from agents import services
    from agents.models import Plan, Team
    from memory.models import Memory
    from surfaces.chat import record as chat_record
    from surfaces.chat import start as chat_start

    Schedule.objects.all().delete()  # the only sweep is the one the clock starts with
    team = Team.objects.get_or_create(slug="bench-cap", defaults={"name": "Bench", "plan": Plan.TEAM})[0]
    rows = []
    for index, (latency, workers, concurrency) in enumerate(configs):
        fake.default = model_answer(latency)
        agent = services.agent_create(
            team=team, name=f"Writer {index}", config={"memorySettings": {"on": True, "quietMinutes": 5}}
        )
        start_at = timezone.now() - timedelta(minutes=30)
        for i in range(users):
            conversation = chat_start.conversation_start(agent=agent, external_id=f"w{index}_{i}", now=start_at)
            chat_record.message_record(
                conversation=conversation, kind="user", text="Please email me, not a call.", now=start_at
            )
        cluster_env = {**env, "Q_WORKERS": str(workers), "LOG_LEVEL": "INFO"}
        if concurrency:
            cluster_env["MODEL_CONCURRENCY"] = str(concurrency)
        cluster, log = start([sys.executable, "manage.py", "qcluster"], cluster_env, tmp / f"qcluster{index}.log")
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # every worker ready before the clock starts
                log.seek(0)
                if log.read().count("ready for work") >= workers:
                    break
                time.sleep(0.5)
            written = Memory.objects.filter(agent=agent).exclude(text="")
            load_before = os.getloadavg()[0]
            calls_before = len(fake.requests)
            began = time.monotonic()
            async_task("memory.tasks.sweep_quiet_windows")
            while written.count() < users and time.monotonic() - began < 600:
                time.sleep(0.1)
            elapsed = time.monotonic() - began
            done = written.count()
            rss = tree_rss_kib(cluster.pid)  # after the sweep: each process as it is at work
            calls = len(fake.requests) - calls_before
        finally:
            stop(cluster, log)
        row = {
            "latency": latency,
            "workers": workers,
            "concurrency": concurrency or "default",
            "done": done,
            "users": users,
            "seconds": elapsed,
            "rate": done / elapsed,
            "load": (load_before, os.getloadavg()[0]),
            "rss_mib": sorted(kib / 1024 for kib in rss),
            "calls": calls,
        }
        rows.append(row)
        print(
            f"writer  model {latency:g} s  workers={workers}  MODEL_CONCURRENCY={row['concurrency']}  "
            f"{done}/{users} runs in {elapsed:5.1f} s = {row['rate']:6.2f} runs/s  ({calls} model calls; load "
            f"{row['load'][0]:.1f} -> {row['load'][1]:.1f}; cluster RSS MiB "
            f"{', '.join(f'{m:.0f}' for m in row['rss_mib'])})",
            flush=True,
        )
    instant = {(r["workers"], r["concurrency"]): r["rate"] for r in rows if r["latency"] == 0}
    for row in rows:
        limit = instant.get((row["workers"], row["concurrency"]))
        if row["latency"] and limit:
            print(
                f"ratio   model {row['latency']:g} s / instant model, workers={row['workers']} "
                f"MODEL_CONCURRENCY={row['concurrency']}: {row['rate']:.2f} / {limit:.2f} = {row['rate'] / limit:.2f}",
                flush=True,
            )
    return rows


def chat_figures(env, configs, seconds, connections, tmp) -> list[tuple]:
    from agents import services
    from agents.models import Plan, Team
    from surfaces.chat import start as chat_start

    team = Team.objects.get_or_create(slug="bench-cap", defaults={"name": "Bench", "plan": Plan.TEAM})[0]
    agent = services.agent_create(team=team, name="Chat", config={"memorySettings": {"on": True, "quietMinutes": 60}})
    key = services.api_key_create(team=team, name="bench")[1]
    chats = [chat_start.conversation_start(agent=agent, external_id=f"c_{i}").public_id for i in range(200)]
    lua = tmp / "chat.lua"
    lua.write_text(
        "local chats = {" + ",".join(f'"{c}"' for c in chats) + "}\n"
        'wrk.method = "POST"\n'
        'wrk.body = \'{"text": "Can you check my order status?"}\'\n'
        f'wrk.headers["Authorization"] = "Bearer {key}"\n'
        'wrk.headers["Content-Type"] = "application/json"\n'
        "request = function()\n"
        '  return wrk.format(nil, "/api/v1/conversations/" .. chats[math.random(#chats)] .. "/messages")\n'
        "end\n"
    )
    rows = []
    for workers, threads in configs:
        port = free_port()
        server, log = start(
            [
                shutil.which("gunicorn", path=str(Path(sys.executable).parent)) or "gunicorn",
                "-c",
                "deploy/gunicorn.conf.py",
                "agentnava_site.wsgi",
            ],
            {
                **env,
                "WEB_CONCURRENCY": str(workers),
                "GUNICORN_THREADS": str(threads),
                "GUNICORN_BIND": f"127.0.0.1:{port}",
            },
            tmp / f"gunicorn{workers}x{threads}.log",
        )
        try:
            for _ in range(120):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.5)
            out = subprocess.run(
                [
                    "wrk",
                    "-t2",
                    f"-c{connections}",
                    f"-d{seconds}s",
                    "--timeout",
                    "30s",
                    "--latency",
                    "-s",
                    str(lua),
                    f"http://127.0.0.1:{port}",
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        finally:
            stop(server, log)
        rps = float(next(line.split()[1] for line in out.splitlines() if line.startswith("Requests/sec")))
        p50 = next((line.split()[1] for line in out.splitlines() if line.strip().startswith("50%")), "?")
        errors = next(
            (line.strip() for line in out.splitlines() if "Non-2xx" in line or "Socket errors" in line), "no errors"
        )
        rows.append((workers, threads, rps, p50, errors))
        print(
            f"chat    workers={workers} threads={threads:>2}  {rps:6.2f} replies/s  p50 {p50}  ({errors})", flush=True
        )
    return rows


def cpu_figures(fake, latency, n) -> tuple[float, float]:
    """CPU time of one chat reply and of one writer run, in this process, with the model answering
    at once: what a core can do, whatever the model's latency (the loopback model's own few
    hundred microseconds a call are included)."""
    from datetime import timedelta

    from django.test import Client
    from django.utils import timezone

    from agents import services
    from agents.models import Plan, Team
    from memory.writer.run import run_quiet_window
    from surfaces.chat import record as chat_record
    from surfaces.chat import start as chat_start

    fake.default = model_answer(0)
    team = Team.objects.get_or_create(slug="bench-cap", defaults={"name": "Bench", "plan": Plan.TEAM})[0]
    agent = services.agent_create(team=team, name="CPU", config={"memorySettings": {"on": True, "quietMinutes": 5}})
    key = services.api_key_create(team=team, name="bench cpu")[1]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
    chats = [chat_start.conversation_start(agent=agent, external_id=f"cpu_{i}").public_id for i in range(n)]
    client.post(f"/api/v1/conversations/{chats[0]}/messages", {"text": "warm up"}, content_type="application/json")
    calls_before = len(fake.requests)
    began = time.process_time()
    for chat in chats:
        response = client.post(
            f"/api/v1/conversations/{chat}/messages",
            {"text": "Can you check my order?"},
            content_type="application/json",
        )
        assert response.status_code in (200, 201), response.content[:200]
    reply_cpu = (time.process_time() - began) / n
    calls_per_reply = (len(fake.requests) - calls_before) / n
    start_at = timezone.now() - timedelta(minutes=30)
    users = []
    for i in range(n):
        conversation = chat_start.conversation_start(agent=agent, external_id=f"cpu_w{i}", now=start_at)
        chat_record.message_record(
            conversation=conversation, kind="user", text="Please email me, not a call.", now=start_at
        )
        users.append(conversation.end_user_id)
    began = time.process_time()
    for end_user_id in users:
        run_quiet_window(end_user_id=end_user_id)
    run_cpu = (time.process_time() - began) / n
    fake.default = model_answer(latency)
    print(
        f"cpu     one chat reply {reply_cpu * 1000:.0f} ms ({calls_per_reply:g} model call), one writer run {run_cpu * 1000:.0f} ms"
        " (CPU time, in process)",
        flush=True,
    )
    return reply_cpu, run_cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the model takes to answer (chat replies)")
    parser.add_argument(
        "--sweeps",
        default="0x2,1x2,3x2",
        help="writer sweeps as LATENCYxWORKERS[xMODEL_CONCURRENCY], comma-separated (latency 0: the instant "
        "model, the CPU-bound limit, the ratios' denominator), or none",
    )
    parser.add_argument("--users", type=int, default=150, help="due end users a sweep")
    parser.add_argument("--web", default="none", help="gunicorn WORKERSxTHREADS to try (e.g. 1x1,2x8,2x32), or none")
    parser.add_argument("--seconds", type=int, default=15, help="each wrk run")
    parser.add_argument("--connections", type=int, default=64, help="wrk connections")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed: apt-get install -y wrk")

    from tests.fake_openai import FakeOpenAI

    fake = FakeOpenAI().start()
    # socketserver listens with a backlog of 5: at 16 or 64 calls at once, connections past it wait
    # for a SYN retry (1 s, then 3 s) and the bench would measure the fake model, not the app.
    fake.httpd.socket.listen(512)
    fake.default = model_answer(args.latency)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "agentnava_site.settings",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-" + "".join(random.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=48)),
        "ALLOWED_HOSTS": "127.0.0.1,testserver",
        "SECURE_SSL_REDIRECT": "0",
        "DATABASE_URL": ADMIN_URL.rsplit("/", 1)[0] + "/" + DB_NAME,
        "REDIS_URL": REDIS_URL,
        "AGENTNAVA_ENGINE": "openai",
        "OPENAI_API_KEY": "sk-bench-not-real",
        "OPENAI_BASE_URL": fake.base_url,
        "OPENAI_TIMEOUT_SECONDS": "30",
        "OPENAI_MAX_RETRIES": "0",
        "API_RATE_PER_KEY": "off",
        "LOG_LEVEL": "WARNING",
        "Q_SYNC": "0",
    }
    os.environ.update(env)
    admin(f"DROP DATABASE IF EXISTS {DB_NAME}")
    admin(f"CREATE DATABASE {DB_NAME}")
    import redis

    redis.from_url(REDIS_URL).flushdb()
    tmp = Path(tempfile.mkdtemp(prefix="agentnava-capacity-"))
    try:
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        print(
            f"{os.cpu_count()} cores, Python {platform.python_version()}; load average "
            f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} at the start",
            flush=True,
        )
        cpu_figures(fake, args.latency, 50)
        if args.sweeps != "none":
            configs = []
            for sweep in args.sweeps.split(","):
                latency, workers, *concurrency = sweep.split("x")
                configs.append((float(latency), int(workers), int(concurrency[0]) if concurrency else 0))
            writer_figures(env, fake, configs, args.users, tmp)
        if args.web != "none":
            configs = [tuple(int(x) for x in c.split("x")) for c in args.web.split(",")]
            chat_figures(env, configs, args.seconds, args.connections, tmp)
    finally:
        from django.db import connections

        connections.close_all()
        fake.stop()
        redis.from_url(REDIS_URL).flushdb()
        admin(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
