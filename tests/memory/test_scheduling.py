"""Scheduling on django-q (R11): the sweep's schedule, the real cluster, retention (R4)."""

import time
from datetime import timedelta
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from django_q.models import Schedule

from agents import services as agent_services
from memory.models import Memory
from memory.store.services import memory_retention_sweep, memory_set
from ops.schedules import schedules_ensure
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start
from tests.cluster import start_cluster, stop_cluster


def test_the_cluster_config_is_bounded_and_does_not_catch_up():
    q = settings.Q_CLUSTER
    assert q["timeout"] < q["retry"]
    assert 0 < q["max_attempts"] <= 5
    assert q["catch_up"] is False


def test_the_sweep_finds_due_work_through_an_index(agent):
    if connection.vendor != "postgresql":
        pytest.skip("EXPLAIN output is PostgreSQL's")
    from agents.models import Conversation
    from memory.store.selectors import end_users_due_for_memory

    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        sql, params = (
            Conversation.objects.filter(memory_due_at__lte=timezone.now())
            .order_by("memory_due_at")
            .values_list("end_user_id")
            .query.sql_with_params()
        )
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("SET enable_seqscan = on")
    assert "conversation_memory_due" in plan
    assert end_users_due_for_memory(now=timezone.now()) == []


def test_memory_sweep_command_reads_as_of_a_time(agent, capsys):
    start = timezone.now() - timedelta(hours=2)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1", now=start)
    chat_record.message_record(conversation=conversation, kind="user", text="I work from the Pune office.", now=start)
    call_command("memory_sweep", "--as-of", (start + timedelta(minutes=5)).isoformat())
    assert not Memory.objects.filter(text__contains="Pune").exists()
    call_command("memory_sweep", "--as-of", (start + timedelta(minutes=16)).isoformat())
    assert Memory.objects.get().text == "Works from the Pune office."
    assert "1 end user(s) read" in capsys.readouterr().out


def test_retention_empties_after_keep_for_days_and_after_30_days_off(agent, team):
    """The words go; the row stays with its horizon (read_up_to moved to the expiry), so no older
    chat can bring a line back (tests/memory/test_lifecycle.py follows that through)."""
    now = timezone.now()
    old = agent_services.end_user_get_or_create(agent=agent, external_id="u_old")
    recent = agent_services.end_user_get_or_create(agent=agent, external_id="u_recent")
    for end_user, last_chat in ((old, now - timedelta(days=91)), (recent, now - timedelta(days=5))):
        memory_set(end_user=end_user, text="Prefers email over phone.")
        type(end_user).objects.filter(pk=end_user.pk).update(last_chat_at=last_chat)
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"keepForDays": 90}})
    assert memory_retention_sweep(now=now) == {"expired": 1}
    kept = dict(Memory.objects.values_list("end_user__external_id", "text"))
    assert kept == {"u_old": "", "u_recent": "Prefers email over phone."}
    assert Memory.objects.get(end_user=old).read_up_to == now
    assert memory_retention_sweep(now=now) == {"expired": 0}  # once

    agent_services.agent_update(agent=agent, changes={"memorySettings": {"on": False}})
    assert memory_retention_sweep(now=now + timedelta(days=29)) == {"expired": 0}
    # Turned back on within 30 days: intact.
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"on": True}})
    assert memory_retention_sweep(now=now + timedelta(days=45)) == {"expired": 0}
    assert Memory.objects.exclude(text="").count() == 1
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"on": False}})
    assert memory_retention_sweep(now=now + timedelta(days=31)) == {"expired": 1}
    assert Memory.objects.exclude(text="").count() == 0 and Memory.objects.count() == 2


@pytest.mark.cluster
@pytest.mark.django_db(transaction=True)
def test_a_real_cluster_runs_the_quiet_window_from_its_schedule(agent, tmp_path):
    schedules_ensure()
    Schedule.objects.filter(name="memory-quiet-sweep").update(next_run=timezone.now() - timedelta(seconds=1))
    start = timezone.now() - timedelta(minutes=30)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_cluster", now=start)
    chat_record.message_record(
        conversation=conversation, kind="user", text="Please email me, I prefer email over phone.", now=start
    )
    cluster, log = start_cluster(tmp_path / "qcluster.log")
    try:
        deadline = time.monotonic() + 120  # the scheduler ticks every ~30 s
        memory = None
        while time.monotonic() < deadline:
            memory = Memory.objects.filter(end_user__external_id="u_cluster").exclude(text="").first()
            if memory:
                break
            assert cluster.poll() is None, (tmp_path / "qcluster.log").read_text()[-2000:]
            time.sleep(1)
        assert memory is not None, "no quiet-window run in time:\n" + (tmp_path / "qcluster.log").read_text()[-2000:]
        assert memory.text == "Prefers email over phone."
        assert memory.runs.get().kind == "quiet"
    finally:
        stop_cluster(cluster, log)


@pytest.mark.parametrize("command", ["memory_sweep", "memory_retention"])
def test_the_run_once_commands_refuse_a_bad_as_of_and_read_a_naive_one_in_the_current_zone(db, command):
    from django.core.management.base import CommandError

    from memory.management.as_of import as_of_now

    with pytest.raises(CommandError, match="not an ISO time"):
        call_command(command, "--as-of", "tomorrow", stdout=StringIO())
    assert as_of_now("2026-11-03T15:00:00").tzinfo is not None
    assert as_of_now("2026-11-03T15:00:00+05:30").utcoffset().total_seconds() == 19800
