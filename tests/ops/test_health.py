"""The background work cannot stall unseen (issue 13): `memory_health` and /healthz/tasks."""

import os
import re
import signal
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_q.brokers import get_broker
from django_q.signing import SignedPackage

from memory.models import ApplyJob, Memory, TrialJob
from memory.writer.sweep import memory_sweep
from ops.health import task_health
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start
from tests.cluster import start_cluster, stop_cluster
from tests.ops.redis_helpers import manage, model_env, wait_for, writer_answer


def make_due(agent, external_id, minutes_ago=30):
    start = timezone.now() - timedelta(minutes=minutes_ago)
    conversation = chat_start.conversation_start(agent=agent, external_id=external_id, now=start)
    chat_record.message_record(conversation=conversation, kind="user", text="I prefer email over phone.", now=start)
    return conversation


def health_exit(**kwargs):
    try:
        call_command("memory_health", **kwargs)
    except SystemExit as exc:
        return exc.code
    return 0


def checks(report):
    return {c["name"]: c for c in report["checks"]}


def test_healthy_when_nothing_waits(db, client, capsys):
    assert health_exit() == 0
    assert "due: ok" in capsys.readouterr().out
    response = client.get("/healthz/tasks")
    assert response.status_code == 200
    assert response.json()["ok"] is True


def test_an_old_due_end_user_fails_the_check_until_swept(agent, client):
    make_due(agent, "u_due")
    assert health_exit() == 1
    response = client.get("/healthz/tasks")
    assert response.status_code == 503
    due = checks(response.json())["due"]
    assert (due["ok"], due["waiting"]) == (False, 1) and due["oldest_seconds"] > 600
    assert "u_due" not in response.content.decode()  # ages and counts only

    memory_sweep(run_inline=True)
    assert Memory.objects.get().text
    assert health_exit() == 0
    assert client.get("/healthz/tasks").status_code == 200


def test_a_recent_due_end_user_is_within_the_threshold(agent):
    make_due(agent, "u_recent", minutes_ago=16)  # quiet window of 15 minutes ended a minute ago
    assert task_health(threshold=300)["ok"] is True
    assert task_health(threshold=10)["ok"] is False


def test_an_old_queued_task_fails_the_check(db):
    broker = get_broker()
    old = {
        "id": "x",
        "name": "x",
        "func": "memory.tasks.sweep_quiet_windows",
        "args": (),
        "kwargs": {},
        "started": timezone.now() - timedelta(minutes=10),
    }
    broker.enqueue(SignedPackage.dumps(old))
    queue = checks(task_health(threshold=300))["queue"]
    assert (queue["ok"], queue["waiting"]) == (False, 1) and queue["oldest_seconds"] >= 600
    broker.purge_queue()
    assert task_health(threshold=300)["ok"] is True


def test_an_apply_without_a_heartbeat_fails_the_check(agent, user):
    now = timezone.now()
    job = ApplyJob.objects.create(
        agent=agent,
        version=agent.versions.first(),
        status=ApplyJob.Status.RUNNING,
        created_at=now - timedelta(minutes=20),
        started_at=now - timedelta(minutes=20),
        heartbeat_at=now - timedelta(minutes=10),
    )
    assert checks(task_health(threshold=300))["apply"]["ok"] is False
    ApplyJob.objects.filter(pk=job.pk).update(heartbeat_at=now)
    assert task_health(threshold=300)["ok"] is True
    ApplyJob.objects.filter(pk=job.pk).update(status=ApplyJob.Status.DONE, heartbeat_at=now - timedelta(hours=1))
    assert task_health(threshold=300)["ok"] is True


def test_resume_stalled_queues_a_lost_apply_again_from_its_cursor(agent, user):
    now = timezone.now()
    job = ApplyJob.objects.create(
        agent=agent,
        version=agent.versions.first(),
        status=ApplyJob.Status.RUNNING,
        created_at=now - timedelta(minutes=20),
        started_at=now - timedelta(minutes=20),
        heartbeat_at=now - timedelta(minutes=10),
    )
    assert health_exit(resume_stalled=True) == 1  # this time it fails, and the job is queued again
    job.refresh_from_db()
    assert job.status == ApplyJob.Status.DONE  # tests run tasks inline: the resumed step finished it
    assert health_exit() == 0


def test_a_try_without_a_heartbeat_fails_the_check_and_is_resumed(agent, user):
    old = timezone.now() - timedelta(minutes=20)
    job = TrialJob.objects.create(
        agent=agent, config={}, people=1, status=TrialJob.Status.RUNNING, as_of=old, created_at=old, started_at=old
    )
    assert checks(task_health(threshold=300))["try"]["ok"] is False
    assert health_exit(resume_stalled=True) == 1
    job.refresh_from_db()
    assert job.status == TrialJob.Status.DONE  # tests run tasks inline: the resumed step finished it
    assert health_exit() == 0


ENQUEUE_SWEEP = "from django_q.tasks import async_task; async_task('memory.tasks.sweep_quiet_windows')"


@pytest.mark.cluster
@pytest.mark.django_db(transaction=True)
def test_a_stalled_cluster_on_redis_fails_the_check_and_a_working_one_passes(agent, redis_url, fake_openai, tmp_path):
    """Due work and no cluster: the check fails. A cluster works it off: it passes. The cluster is
    frozen (SIGSTOP, like the issue's dead worker: alive, taking nothing) while a sweep waits in
    Redis: the check fails on the queue. Thawed: it passes again."""
    make_due(agent, "u_first")
    first = manage("memory_health", "--stall-seconds", "60", redis_url=redis_url, check=False)
    assert first.returncode == 1 and "due: STALLED" in first.stdout, first.stdout + first.stderr

    fake_openai.default = writer_answer
    cluster = start_cluster(tmp_path / "qcluster.log", redis_url=redis_url, **model_env(fake_openai))
    try:
        manage(code=ENQUEUE_SWEEP, redis_url=redis_url)
        wait_for(
            lambda: Memory.objects.exclude(text="").filter(end_user__external_id="u_first").exists(),
            what="the first quiet-window run",
            clusters=[cluster],
        )
        healthy = manage("memory_health", "--stall-seconds", "60", redis_url=redis_url, check=False)
        assert healthy.returncode == 0, healthy.stdout + healthy.stderr

        os.killpg(cluster[0].pid, signal.SIGSTOP)
        make_due(agent, "u_second")
        # Two sweeps, as two schedule ticks would queue: the frozen cluster's pending BLPOP may still
        # take the first off Redis (into a process that runs nothing); the second waits in Redis.
        manage(code=ENQUEUE_SWEEP, redis_url=redis_url)
        manage(code=ENQUEUE_SWEEP, redis_url=redis_url)

        def stalled():
            result = manage("memory_health", "--stall-seconds", "5", redis_url=redis_url, check=False)
            return result if result.returncode == 1 and "queue: STALLED" in result.stdout else None

        report = wait_for(stalled, what="the check to see the frozen cluster", timeout=60)
        assert "due: STALLED, 1 waiting" in report.stdout
        assert re.search(r"queue: STALLED, [12] waiting", report.stdout), report.stdout

        os.killpg(cluster[0].pid, signal.SIGCONT)
        wait_for(
            lambda: Memory.objects.exclude(text="").filter(end_user__external_id="u_second").exists(),
            what="the thawed cluster's run",
            clusters=[cluster],
        )
        wait_for(
            lambda: manage("memory_health", "--stall-seconds", "60", redis_url=redis_url, check=False).returncode == 0,
            what="the check to pass again",
            timeout=60,
        )
    finally:
        stop_cluster(*cluster)


@pytest.mark.cluster
@pytest.mark.django_db(transaction=True)
def test_the_issues_dead_idle_worker_is_caught_and_a_restart_heals_it(agent, redis_url, fake_openai, tmp_path):
    """The issue's report: kill the one idle worker (the one blocked reading the task pipe, so it
    dies holding the pipe's lock). The cluster reincarnates a worker and says it is ready, yet no
    task runs again. The check fails on the queue; a restart (what the supervisor does on that
    failure) makes it pass."""
    fake_openai.default = writer_answer
    env = model_env(fake_openai)
    cluster = start_cluster(tmp_path / "qcluster.log", redis_url=redis_url, Q_WORKERS="1", **env)
    try:
        log = cluster[1]

        def worker_pid():
            log.seek(0)
            found = re.findall(r"ready for work at (\d+)", log.read())
            return int(found[0]) if found else None

        pid = wait_for(worker_pid, what="the worker to be ready", clusters=[cluster])
        os.kill(pid, signal.SIGKILL)
        wait_for(
            lambda: len(re.findall(r"ready for work at", (log.seek(0), log.read())[1])) >= 2,
            what="the reincarnated worker",
            clusters=[cluster],
        )
        make_due(agent, "u_after_kill")
        for _ in range(3):  # three schedule ticks' sweeps
            manage(code=ENQUEUE_SWEEP, redis_url=redis_url)

        def stalled():
            result = manage("memory_health", "--stall-seconds", "5", redis_url=redis_url, check=False)
            return result if result.returncode == 1 and "queue: STALLED" in result.stdout else None

        wait_for(stalled, what="the check to see the dead worker", timeout=90)
        assert not Memory.objects.exclude(text="").filter(end_user__external_id="u_after_kill").exists()
    finally:
        stop_cluster(*cluster)

    cluster = start_cluster(tmp_path / "qcluster-restarted.log", redis_url=redis_url, Q_WORKERS="1", **env)
    try:
        wait_for(
            lambda: Memory.objects.exclude(text="").filter(end_user__external_id="u_after_kill").exists(),
            what="the restarted cluster's run",
            clusters=[cluster],
        )
        wait_for(
            lambda: manage("memory_health", "--stall-seconds", "60", redis_url=redis_url, check=False).returncode == 0,
            what="the check to pass after the restart",
            timeout=90,
        )
    finally:
        stop_cluster(*cluster)
