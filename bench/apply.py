"""Benchmark of Apply (review every kept memory against the published instructions) at scale: it
prints figures, it is not a test.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentnava_bench .venv/bin/python bench/apply.py [--memories 100000]

Builds an agent with N memories (3 to 6 lines each, a fifth of them with an office line the new
instructions leave out) in one SQL statement per table, publishes "Do not keep office locations.",
starts an Apply and drives its steps in this process as one django-q worker would (each step
works TASK_SECONDS, then hands over), with the offline engine. Prints the progress the Memory tab
would show as it goes, the total time, the time a memory, the statements a batch, and the counts.
Everything lives in a scratch team removed at the end.
"""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentnava_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-not-a-secret-0123456789abcdefghijklmnop")

import django  # noqa: E402

django.setup()


import logging  # noqa: E402

from django.db import connection  # noqa: E402
from django_q.conf import Conf  # noqa: E402

from agents import services as agent_services  # noqa: E402
from agents.models import Plan, Team  # noqa: E402
from bench.statements import Statements  # noqa: E402
from memory.models import MemoryRun  # noqa: E402
from memory.tools import apply  # noqa: E402

LINES = [
    "Prefers email over phone.",
    "Uses the Android app.",
    "Is migrating their tickets from Zendesk.",
    "Might move to the annual plan (said once, 3 Nov).",
    "Speaks Hindi.",
    "Renewed the plan on 3 Nov.",
    "Prefers to be called in the morning.",
    "Uses Slack for team chat.",
]
OFFICES = ["Pune", "Delhi", "Lisbon", "Austin", "Nairobi"]


def build(agent, n: int) -> None:
    lines_sql = "ARRAY[" + ",".join(["%s"] * len(LINES)) + "]"
    offices_sql = "ARRAY[" + ",".join(["%s"] * len(OFFICES)) + "]"
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO agents_enduser (agent_id, external_id, created_at) "
            "SELECT %s, 'apply_' || g, now() FROM generate_series(1, %s) g",
            [agent.pk, n],
        )
        # Lines k .. k+2 (+ up to 3 more) of LINES, and for one in five an office first.
        cursor.execute(
            f"""
            INSERT INTO memory_memory (agent_id, end_user_id, text, created_at, updated_at, read_up_to)
            SELECT %s, eu.id,
                   CASE WHEN eu.id %% 5 = 0
                        THEN 'Works from the ' || ({offices_sql})[1 + eu.id %% {len(OFFICES)}] || ' office.' || chr(10)
                        ELSE '' END
                   || array_to_string(({lines_sql})[1 + eu.id %% 5 : 3 + eu.id %% 5 + eu.id %% 4], chr(10)),
                   now(), now() - (eu.id || ' microseconds')::interval, now() - interval '1 day'
            FROM agents_enduser eu WHERE eu.agent_id = %s
            """,
            [agent.pk, *OFFICES, *LINES, agent.pk],
        )
        cursor.execute("ANALYZE memory_memory")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("bench/apply.py builds its memories with PostgreSQL's generate_series: set DATABASE_URL")
    logging.disable(logging.INFO)  # one log line per audit row would be this bench's own cost
    Conf.SYNC = False  # the job's first task is queued, not run: this process drives the steps
    print(
        f"database: {connection.vendor}; cpu count: {os.cpu_count()}; engine: offline; batch {apply.BATCH_SIZE}, step {apply.TASK_SECONDS} s"
    )
    Team.objects.filter(slug="bench-apply").delete()
    team = Team.objects.create(slug="bench-apply", name="Bench Apply", plan=Plan.TEAM)
    try:
        agent = agent_services.agent_create(team=team, name="Bench", config={"memorySettings": {"on": True}})
        t0 = time.perf_counter()
        build(agent, args.memories)
        print(f"built {args.memories:,} memories in {time.perf_counter() - t0:.1f} s")
        agent_services.agent_update(
            agent=agent, changes={"memorySettings": {"instructions": "Do not keep office locations."}}
        )
        job = apply.apply_start(agent=agent)
        t0, c0, steps = time.perf_counter(), time.process_time(), 0
        status = "continued"
        with Statements(connection) as queries:
            while status == "continued":
                status = apply.apply_job_step(job.pk, enqueue_next=False)
                steps += 1
                job.refresh_from_db()
                elapsed = time.perf_counter() - t0
                print(
                    f"  {elapsed:6.1f} s  {job.reviewed:,} of {job.total:,} reviewed ({job.reviewed / job.total:.0%}), {job.changed:,} changed"
                )
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(
            f"statements: {queries.count:,} in all, {queries.count / job.reviewed * apply.BATCH_SIZE:.1f} "
            f"a batch of {apply.BATCH_SIZE} memories"
        )
        job.refresh_from_db()
        runs = MemoryRun.objects.filter(memory__agent=agent, kind=MemoryRun.Kind.APPLY).count()
        print(
            f"apply: {status}; {job.reviewed:,} reviewed, {job.changed:,} changed, {job.removed:,} lines removed, "
            f"{job.failed} failed, {runs:,} audit rows; {steps} steps"
        )
        print(
            f"apply over {job.total:,} memories: {elapsed:.0f} s ({elapsed / 60:.1f} min) = {elapsed / job.reviewed * 1000:.2f} ms a memory "
            f"({job.reviewed / elapsed:.0f} memories/s); this process's CPU {cpu / job.reviewed * 1000:.2f} ms a memory"
        )
    finally:
        with connection.cursor() as cursor:
            cursor.execute(
                "DELETE FROM memory_memoryrun WHERE memory_id IN (SELECT id FROM memory_memory WHERE agent_id IN (SELECT id FROM agents_agent WHERE team_id = %s))",
                [team.pk],
            )
            cursor.execute(
                "DELETE FROM memory_memory WHERE agent_id IN (SELECT id FROM agents_agent WHERE team_id = %s)",
                [team.pk],
            )
            cursor.execute(
                "DELETE FROM agents_enduser WHERE agent_id IN (SELECT id FROM agents_agent WHERE team_id = %s)",
                [team.pk],
            )
        team.delete()


if __name__ == "__main__":
    main()
