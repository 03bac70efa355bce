"""Benchmark of the memory writer and the quiet-window sweep (not a test: it prints figures).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentnava_bench python bench/memory_writer.py

Reports, in one run, on the configured database (PostgreSQL for the sweep at scale):
1. writer runs per second with the offline engine (N end users, M messages each);
2. the offline engine alone (its rules and the guards it asks, no database): CPU ms per run on the
   same kind of payload, and on the writer evaluation's cases (tests/eval/cases*.jsonl), which mix
   languages, long messages and several chats;
3. the sweep's time with CONVERSATIONS conversations of which 1% are due, and its EXPLAIN;
4. the input size of one run as an end user's history grows (it must stay flat).
Everything it makes lives in a scratch team that it removes at the end.
"""

import argparse
import json
import multiprocessing
import os
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentnava_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-not-a-secret-0123456789abcdefghijklmnop")

import django  # noqa: E402

django.setup()


from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from agents import services as agent_services  # noqa: E402
from agents.models import Plan, Team  # noqa: E402
from bench.statements import Statements  # noqa: E402
from memory.store.selectors import end_users_due_for_memory, writer_input  # noqa: E402
from memory.writer import batch as writer_batch  # noqa: E402
from memory.writer import run as writer  # noqa: E402
from surfaces.chat import record as chat_record  # noqa: E402
from surfaces.chat import start as chat_start  # noqa: E402

SENTENCES = [
    "I work from the {city} office.",
    "Please email me, I prefer email over phone.",
    "We are migrating our tickets from {tool}.",
    "Maybe we'll move to the annual plan.",
    "Can you check invoice {n} from last month?",
    "I use the {app} app mostly.",
]
CITIES = ["Pune", "Delhi", "Lisbon", "Austin", "Nairobi", "Leeds", "Osaka"]
TOOLS = ["Zendesk", "Freshdesk", "Intercom", "Jira"]
APPS = ["Android", "iOS", "web"]


def sentence(i: int, j: int) -> str:
    """Person i's j-th message: the same kinds of things for everyone, in words that differ from
    person to person (so nothing a process remembers of one run makes the next one cheaper)."""
    return SENTENCES[(i + j) % len(SENTENCES)].format(
        city=CITIES[i % len(CITIES)], tool=TOOLS[i % len(TOOLS)], app=APPS[i % len(APPS)], n=1000 + i * 7 + j
    )


def scratch_agent(slug):
    Team.objects.filter(slug=slug).delete()
    team = Team.objects.create(slug=slug, name="Bench", plan=Plan.TEAM)
    agent = agent_services.agent_create(
        team=team,
        name="Bench",
        config={
            "actions": [{"name": "renew_plan", "label": "Renewed the plan"}],
            "memorySettings": {"on": True, "quietMinutes": 5},
        },
    )
    return team, agent


def people(agent, prefix, n_users, m_messages):
    """n_users end users, each with one chat of m_messages and a renewal, quiet for hours."""
    start = timezone.now() - timedelta(hours=3)
    end_user_ids = []
    for i in range(n_users):
        conversation = chat_start.conversation_start(agent=agent, external_id=f"{prefix}_{i}", now=start)
        at = start
        for j in range(m_messages):
            at += timedelta(seconds=20)
            chat_record.message_record(conversation=conversation, kind="user", text=sentence(i, j), now=at)
        chat_record.action_run_record(conversation=conversation, name="renew_plan", status="succeeded", now=at)
        end_user_ids.append(conversation.end_user_id)
    return end_user_ids


def _batches(ids):
    return [ids[k : k + writer_batch.BATCH_SIZE] for k in range(0, len(ids), writer_batch.BATCH_SIZE)]


def _run_batches(ids):
    """As a worker runs the sweep's tasks: one batch after another, each at its own time."""
    return sum(len(writer_batch.run_quiet_windows(end_user_ids=batch, now=timezone.now())) for batch in _batches(ids))


def writer_throughput(agent, n_users, m_messages, workers=2):
    """The quiet-window writer three ways, on fresh people each time: one run at a time
    (`writer.run_quiet_window`), in batches (`writer_batch`, what the sweep queues) in this
    process, and in batches in `workers` processes at once (a cluster's workers on this machine's
    cores, each with its own database connection)."""
    single_ids = people(agent, "single", n_users, m_messages)
    batch_ids = people(agent, "batch", n_users, m_messages)
    parallel_ids = people(agent, "parallel", n_users * workers, m_messages)
    now = timezone.now()
    t0, c0 = time.perf_counter(), time.process_time()
    with Statements(connection) as queries:
        runs = sum(1 for pk in single_ids if writer.run_quiet_window(end_user_id=pk, now=now))
    single, single_cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"writer, one run at a time: {runs} runs ({n_users} people x {m_messages} messages + 1 action) in {single:.2f} s "
        f"= {runs / single:.1f} runs/s; {queries.count / runs:.1f} statements a run; "
        f"CPU {single_cpu / runs * 1000:.1f} ms a run in this process"
    )
    t0, c0 = time.perf_counter(), time.process_time()
    with Statements(connection) as queries:
        runs = _run_batches(batch_ids)
    batched, batched_cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"writer, batches of {writer_batch.BATCH_SIZE} in one process: {runs} runs in {batched:.2f} s = {runs / batched:.1f} runs/s "
        f"({single / batched:.2f}x one at a time); {queries.count / runs:.2f} statements a run "
        f"({queries.count / len(_batches(batch_ids)):.0f} a batch); CPU {batched_cpu / runs * 1000:.1f} ms a run"
    )
    halves = [parallel_ids[k::workers] for k in range(workers)]
    connection.close()  # each worker opens its own
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        t0 = time.perf_counter()
        runs = sum(pool.map(_run_batches, halves))
        parallel = time.perf_counter() - t0
    print(
        f"writer, batches in {workers} processes at once ({os.cpu_count()} cores, the database on the same machine): "
        f"{runs} runs in {parallel:.2f} s = {runs / parallel:.1f} runs/s (offline engine, {connection.vendor})"
    )


def _engine_payload(texts, actions=()):
    messages = [
        {"id": f"m{j}", "at": f"2026-11-03T14:{j % 60:02d}:00+00:00", "day": "3 Nov", "text": text}
        for j, text in enumerate(texts)
    ]
    return {"mode": "write", "instructions": {"team": ""}, "lines": [], "messages": messages, "actions": list(actions)}


def engine_alone(n_users, m_messages, rounds=7):
    """CPU time of memory.writer.offline.memory_operations alone, best of ``rounds`` (process time, so the
    other processes on a shared machine matter less)."""
    from memory.writer.offline import memory_operations

    renew = {
        "id": "a1",
        "at": "2026-11-03T14:59:00+00:00",
        "day": "3 Nov",
        "name": "renew_plan",
        "label": "Renewed the plan",
        "status": "succeeded",
    }
    bench_payloads = [_engine_payload([sentence(i, j) for j in range(m_messages)], [renew]) for i in range(n_users)]
    eval_payloads = []
    for path in sorted((Path(__file__).resolve().parents[1] / "tests" / "eval").glob("cases*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            if raw.strip():
                case = json.loads(raw)
                texts = [turn["text"] for chat in case["chats"] for turn in chat["turns"] if turn.get("role") == "user"]
                eval_payloads.append(_engine_payload(texts))
    for name, payloads in (("bench payloads", bench_payloads), ("evaluation cases", eval_payloads)):
        memory_operations(payloads[0])
        best = float("inf")
        for _ in range(rounds):
            t0 = time.process_time()
            for payload in payloads:
                memory_operations(payload)
            best = min(best, time.process_time() - t0)
        print(
            f"offline engine alone, {name}: {len(payloads)} runs in {best * 1000:.0f} ms CPU (best of {rounds}) "
            f"= {best / len(payloads) * 1000:.2f} ms a run"
        )


def sweep_at_scale(agent, total):
    if connection.vendor != "postgresql":
        print("sweep at scale: skipped (needs PostgreSQL for generate_series)")
        return
    version_id = agent.versions.first().pk
    due = total // 100
    with connection.cursor() as cursor:
        t0 = time.perf_counter()
        cursor.execute(
            "INSERT INTO agents_enduser (agent_id, external_id, created_at) "
            "SELECT %s, 'bench_' || g, now() FROM generate_series(1, %s) g",
            [agent.pk, total // 10],
        )
        cursor.execute(
            """
            INSERT INTO agents_conversation (public_id, agent_id, end_user_id, version_id, uses_memory,
                memory_off_reason, project, source, memory_note, started_at, last_activity_at, memory_due_at)
            SELECT 'convb_' || g, %s, eu.id, %s, true, '', '', 'bench', '', now() - interval '2 days',
                   now() - interval '2 days',
                   CASE WHEN g %% 100 = 0 THEN now() - interval '1 minute' ELSE NULL END
            FROM generate_series(1, %s) g
            JOIN agents_enduser eu ON eu.agent_id = %s AND eu.external_id = 'bench_' || (1 + g %% %s)
            """,
            [agent.pk, version_id, total, agent.pk, total // 10],
        )
        cursor.execute("ANALYZE agents_conversation")
        print(f"sweep: built {total:,} conversations ({due:,} due) in {time.perf_counter() - t0:.1f} s")
        qs = conversation_sql()
        cursor.execute("EXPLAIN ANALYZE " + qs[0], qs[1])
        plan = [row[0] for row in cursor.fetchall()]
    timings = []
    for _ in range(5):
        t0 = time.perf_counter()
        found = end_users_due_for_memory(now=timezone.now(), limit=total)
        timings.append(time.perf_counter() - t0)
    print(
        f"sweep: found {len(found):,} due end users; best of 5 {min(timings) * 1000:.1f} ms, median {sorted(timings)[2] * 1000:.1f} ms"
    )
    print("sweep EXPLAIN ANALYZE:")
    for line in plan:
        print("   ", line)


def conversation_sql():
    from agents.models import Conversation

    return (
        Conversation.objects.filter(memory_due_at__lte=timezone.now())
        .order_by("memory_due_at")
        .values_list("end_user_id")
        .query.sql_with_params()
    )


def input_growth(agent, chats):
    start = timezone.now() - timedelta(days=chats + 1)
    sizes = []
    end_user = None
    for k in range(1, chats + 1):
        at = start + timedelta(days=k)
        conversation = chat_start.conversation_start(agent=agent, external_id="u_growth", now=at)
        end_user = conversation.end_user
        for j in range(5):
            at += timedelta(minutes=1)
            chat_record.message_record(conversation=conversation, kind="user", text=sentence(k, j), now=at)
            chat_record.message_record(conversation=conversation, kind="agent", text="Thanks, noted.", now=at)
        memory = getattr(end_user, "memory", None)
        read_from = memory.read_up_to if memory else None
        inp = writer_input(end_user=end_user, read_from=read_from, read_to=at + timedelta(minutes=10))
        if k in (1, 10, 50, chats):
            sizes.append((k, len(inp["messages"]), len(json.dumps(inp, default=str))))
        writer.run_quiet_window(end_user_id=end_user.pk, now=at + timedelta(minutes=10))
        end_user.refresh_from_db()
    print("input of one run as history grows (chats so far, messages read, bytes):")
    for k, n, size in sizes:
        print(f"    after {k:4d} chats: {n} messages, {size} bytes")
    print(f"    ratio last/first bytes: {sizes[-1][2] / sizes[0][2]:.2f} (flat is ~1)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--messages", type=int, default=10)
    parser.add_argument("--conversations", type=int, default=1_000_000)
    parser.add_argument("--chats", type=int, default=100)
    args = parser.parse_args()
    print(f"database: {connection.vendor}; cpu count: {os.cpu_count()}")
    team, agent = scratch_agent("bench-writer")
    try:
        writer_throughput(agent, args.users, args.messages)
        engine_alone(args.users, args.messages)
        input_growth(agent, args.chats)
        sweep_at_scale(agent, args.conversations)
    finally:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("DELETE FROM agents_conversation WHERE agent_id = %s AND source = 'bench'", [agent.pk])
                cursor.execute(
                    "DELETE FROM agents_enduser WHERE agent_id = %s AND external_id LIKE 'bench_%%'", [agent.pk]
                )
        team.delete()


if __name__ == "__main__":
    main()
