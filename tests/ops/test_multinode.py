"""Several nodes (issue 13): two qcluster processes on the real Redis and PostgreSQL, standing for
two machines, share the quiet-window work and Apply. Every memory is written exactly once, none
twice; each Apply reviews each memory once and finishes; concurrent sweeps never queue an end user
twice (the sweep's claim, `memory.store.due.claim`)."""

import re
from collections import Counter
from datetime import timedelta

import pytest
from django.db.models import Count
from django.utils import timezone
from django_q.models import Task

from agents import services as agent_services
from agents.models import Agent
from memory.models import ApplyJob, Memory, MemoryRun
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start
from tests.cluster import start_cluster, stop_cluster
from tests.ops.redis_helpers import manage, model_env, wait_for, writer_answer

END_USERS = 120  # enough for both nodes to share the work; each is written once
AGENTS = 3


def make_due_end_users(agents, count):
    start = timezone.now() - timedelta(minutes=30)
    for n in range(count):
        agent = agents[n % len(agents)]
        conversation = chat_start.conversation_start(agent=agent, external_id=f"u_{n}", now=start)
        chat_record.message_record(
            conversation=conversation, kind="user", text="Please email me, not a call.", now=start
        )


def processed(log, func):
    log.seek(0)
    return len(re.findall(rf"processing \S+ '{re.escape(func)}'", log.read()))


@pytest.mark.cluster
@pytest.mark.django_db(transaction=True)
def test_two_clusters_on_redis_write_every_memory_once_and_finish_apply(
    team, user, agent, redis_url, fake_openai, tmp_path
):
    agents = [agent] + [
        agent_services.agent_create(
            team=team, name=f"Support {n}", user=user, config={"memorySettings": {"on": True, "quietMinutes": 15}}
        )
        for n in range(1, AGENTS)
    ]
    make_due_end_users(agents, END_USERS)
    fake_openai.default = writer_answer
    env = {**model_env(fake_openai), "MODEL_CONCURRENCY": "1"}  # one person a task: many tasks to share out
    clusters = [start_cluster(tmp_path / f"node{n}.log", redis_url=redis_url, Q_WORKERS="2", **env) for n in (1, 2)]
    try:
        # Four sweeps at once, as four schedulers' ticks would queue them; the two nodes run them
        # side by side. The claim hands each due end user to one sweep only.
        manage(
            redis_url=redis_url,
            code=(
                "from django_q.tasks import async_task\n"
                "for _ in range(4): async_task('memory.tasks.sweep_quiet_windows')"
            ),
        )
        written = Memory.objects.exclude(text="")
        wait_for(lambda: written.count() == END_USERS, what=f"{END_USERS} memories", timeout=300, clusters=clusters)
        wait_for(
            lambda: Task.objects.filter(func="memory.tasks.sweep_quiet_windows").count() == 4,
            what="the four sweeps to finish",
            clusters=clusters,
        )

        runs = MemoryRun.objects.filter(kind=MemoryRun.Kind.QUIET)
        assert runs.filter(status=MemoryRun.Status.SUCCEEDED).count() == END_USERS
        twice = runs.values("memory_id").annotate(n=Count("id")).filter(n__gt=1)
        assert not twice.exists(), "a memory was written twice"
        assert set(written.values_list("text", flat=True)) == {"Prefers email over phone."}
        # Queued once each across all four sweeps: with MODEL_CONCURRENCY 1, one end user a task
        # (`writer_batch.batch_size`).
        quiet_tasks = list(Task.objects.filter(func="memory.tasks.run_quiet_windows").values_list("args", flat=True))
        queued = Counter(end_user_id for args in quiet_tasks for end_user_id in args[0])
        assert len(queued) == END_USERS and set(queued.values()) == {1}
        assert {len(args[0]) for args in quiet_tasks} == {1}
        # Both nodes did part of the work.
        per_node = [processed(log, "memory.tasks.run_quiet_windows") for _, log in clusters]
        assert sum(per_node) == len(quiet_tasks) and min(per_node) > 0, per_node

        # Apply for every agent at once: the step tasks spread over both nodes.
        manage(
            redis_url=redis_url,
            code=(
                "from agents.models import Agent\n"
                "from memory.tools.apply import apply_start\n"
                f"for agent in Agent.objects.filter(pk__in={[a.pk for a in agents]}): apply_start(agent=agent)"
            ),
        )
        jobs = ApplyJob.objects.filter(agent__in=agents)
        wait_for(
            lambda: jobs.count() == AGENTS and not jobs.filter(status__in=ApplyJob.ACTIVE).exists(),
            what="every Apply to finish",
            timeout=300,
            clusters=clusters,
        )
        for job in jobs:
            assert (job.status, job.reviewed, job.changed, job.failed) == ("done", job.total, job.total, 0)
        assert sum(job.total for job in jobs) == END_USERS
        applied = MemoryRun.objects.filter(kind=MemoryRun.Kind.APPLY)
        assert applied.count() == END_USERS
        assert not applied.values("memory_id").annotate(n=Count("id")).filter(n__gt=1).exists()
        assert set(Memory.objects.values_list("text", flat=True)) == {"Prefers email."}
        assert sum(processed(log, "memory.tasks.apply_job_step") for _, log in clusters) >= AGENTS
        assert Agent.objects.count() == AGENTS
    finally:
        for cluster in clusters:
            stop_cluster(*cluster)
