"""Quiet-window runs in batches (`memory.writer.batch`, issues 14 and 26): the same memories as runs
of one end user, in a fixed number of queries per batch; a batch does every case itself (a pending
forget, an active chat, a backlog, a memory changed since it was read), and a run of one end user
is a batch of one.

Each test builds the same people twice, on two agents of one team: one agent's are run one by one
(`writer.run_quiet_window`, a batch of one), the other's in one batch, and what each memory became
is compared."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents import services as agent_services
from agents.engines import EngineError
from agents.models import Conversation
from memory.models import Memory, MemoryRun
from memory.store import services
from memory.store.end_user_requests import end_user_request
from memory.writer import batch as writer_batch
from memory.writer import run as writer
from memory.writer import sweep as writer_sweep
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start

SAID = [
    "I work from the Pune office.",
    "Please email me, I prefer email over phone.",
    "Actually, call me instead of emailing.",
    "We are migrating our tickets from Zendesk.",
    "Maybe we'll move to the annual plan.",
    "I use the Android app mostly.",
    "My password is hunter2-Blue-42, keep it handy.",
    "Can you check the invoice from last month?",
    "Stop remembering me.",
    "Please forget where I work.",
]
CONFIG = {
    "actions": [{"name": "renew_plan", "label": "Renewed the plan"}],
    "memorySettings": {"on": True, "quietMinutes": 5},
}
T0 = (timezone.now() - timedelta(days=2)).replace(microsecond=0)


def agents_pair(team, user):
    return [agent_services.agent_create(team=team, name=f"Twin {n}", user=user, config=CONFIG) for n in (1, 2)]


def chat(agent, external_id, texts, *, at, action=None):
    conversation = chat_start.conversation_start(agent=agent, external_id=external_id, now=at)
    for text in texts:
        at += timedelta(seconds=30)
        chat_record.message_record(conversation=conversation, kind="user", text=text, now=at)
        chat_record.message_record(
            conversation=conversation, kind="agent", text="Noted.", now=at + timedelta(seconds=1)
        )
    if action:
        chat_record.action_run_record(conversation=conversation, name="renew_plan", status=action, now=at)
    return conversation.end_user_id, at


def state(agent):
    """What each of the agent's people ended with, by external id: text, stop, how far read, the
    runs' counts, what is still due."""
    out = {}
    for memory in Memory.objects.filter(agent=agent).select_related("end_user"):
        runs = [
            (r.kind, r.status, r.added, r.replaced, r.removed, r.messages_read, r.actions_read, dict(r.dropped))
            for r in memory.runs.order_by("started_at", "id")
        ]
        out[memory.end_user.external_id] = {
            "text": memory.text,
            "stopped": memory.stopped_at is not None,
            "read_up_to": memory.read_up_to and memory.read_up_to - T0,
            "forget_pending": bool(memory.forget_pending),
            "runs": runs,
        }
    due = Conversation.objects.filter(agent=agent, memory_due_at__isnull=False).values_list(
        "end_user__external_id", flat=True
    )
    return out, sorted(due)


def run_both(single_agent, batch_agent, now):
    singles = Conversation.objects.filter(agent=single_agent).values_list("end_user_id", flat=True).distinct()
    for pk in sorted(set(singles)):
        writer.run_quiet_window(end_user_id=pk, now=now)
    batched = sorted(set(Conversation.objects.filter(agent=batch_agent).values_list("end_user_id", flat=True)))
    writer_batch.run_quiet_windows(end_user_ids=batched, now=now)


@pytest.mark.django_db
def test_a_batch_keeps_what_single_runs_keep_across_the_cases(team, user):
    single, batched = agents_pair(team, user)
    for agent in (single, batched):
        chat(agent, "fresh", SAID[:2], at=T0)
        chat(agent, "with_action", SAID[3:5], at=T0, action="succeeded")
        chat(agent, "failed_action", SAID[5:6], at=T0, action="failed")
        chat(agent, "secret", SAID[6:7], at=T0)
        chat(agent, "nothing_new", [], at=T0)
        chat(agent, "changes_mind", SAID[1:3], at=T0)
        chat(agent, "stops", SAID[8:9], at=T0)
        chat(agent, "forgets", SAID[0:1], at=T0)
        _, last = chat(agent, "still_talking", SAID[4:5], at=T0)
        chat(agent, "still_talking", SAID[5:6], at=T0 + timedelta(hours=2))  # active at the run
        chat(agent, "backlog", [f"I use the Android app, note {n}." for n in range(205)], at=T0)
    run_both(single, batched, T0 + timedelta(hours=1))
    for agent in (single, batched):  # a later chat: a forget, more, and a second read of each
        chat(agent, "forgets", SAID[9:10], at=T0 + timedelta(hours=1, minutes=5))
        chat(agent, "fresh", SAID[3:4], at=T0 + timedelta(hours=1, minutes=5))
    run_both(single, batched, T0 + timedelta(hours=2, minutes=1))
    run_both(single, batched, T0 + timedelta(hours=3))
    assert state(single) == state(batched)
    kept, _ = state(batched)
    assert "Zendesk" in kept["fresh"]["text"] and "Android" in kept["backlog"]["text"]
    assert kept["backlog"]["runs"][0][5] == 200  # the backlog is read part by part, as alone
    assert "hunter2" not in kept["secret"]["text"]


@pytest.mark.django_db
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    people=st.lists(
        st.tuples(st.lists(st.integers(0, len(SAID) - 1), max_size=4), st.sampled_from([None, "succeeded", "failed"])),
        min_size=1,
        max_size=6,
    ),
    later=st.lists(st.integers(0, len(SAID) - 1), max_size=3),
)
def test_a_batch_and_single_runs_agree_on_any_mix_of_people(team, user, people, later):
    single, batched = agents_pair(team, user)
    for agent in (single, batched):
        for n, (said, action) in enumerate(people):
            chat(agent, f"p{n}", [SAID[i] for i in said], at=T0, action=action)
    run_both(single, batched, T0 + timedelta(hours=1))
    for agent in (single, batched):
        chat(agent, "p0", [SAID[i] for i in later], at=T0 + timedelta(hours=1, minutes=1))
    run_both(single, batched, T0 + timedelta(hours=2))
    assert state(single) == state(batched)
    for memory in Memory.objects.filter(agent=batched):
        assert len(memory.lines) <= 30


def batch_of(team, user, n, *, at):
    agent = agent_services.agent_create(team=team, name=f"Batch of {n}", user=user, config=CONFIG)
    ids = [chat(agent, f"u{i}", SAID[i % 6 : i % 6 + 2], at=at, action="succeeded")[0] for i in range(n)]
    return agent, ids


@pytest.mark.django_db
def test_a_batch_reads_and_writes_in_a_fixed_number_of_queries(team, user):
    counts = {}
    for n in (3, 25):
        agent, ids = batch_of(team, user, n, at=T0)
        writer_batch.run_quiet_windows(end_user_ids=ids, now=T0 + timedelta(hours=1))  # creates their memories
        for i in range(len(ids)):
            chat(agent, f"u{i}", SAID[(i + 3) % 6 : (i + 3) % 6 + 1], at=T0 + timedelta(hours=1, minutes=1))
        with CaptureQueriesContext(connection) as queries:
            rows = writer_batch.run_quiet_windows(end_user_ids=ids, now=T0 + timedelta(hours=2))
        assert len(rows) == n and all(r.pk and r.status == MemoryRun.Status.SUCCEEDED for r in rows)
        counts[n] = len(queries.captured_queries)
    # The same statements for 3 people as for 25: reads (end users with the published config,
    # memories, active chats, messages, actions, replies, versions), then one transaction (lock,
    # free times, memories, audit rows, webhooks, due read and update, notes).
    assert counts[3] == counts[25] <= 17, counts


@pytest.mark.django_db
def test_a_memory_changed_during_the_batch_is_read_again_in_its_next_round(team, user, monkeypatch):
    agent, ids = batch_of(team, user, 3, at=T0)
    target = ids[1]
    offline = writer.get_engine()

    class EditsMidway:
        """The offline engine, and a team edit of one memory while the batch is thinking."""

        name = offline.name
        edited = False

        def structured(self, **kwargs):
            if not EditsMidway.edited:
                EditsMidway.edited = True
                end_user = agent.end_users.get(pk=target)
                services.memory_set(
                    end_user=end_user, text="Works from the Delhi office.", now=T0 + timedelta(minutes=50)
                )
            return offline.structured(**kwargs)

    monkeypatch.setattr(writer, "get_engine", lambda: EditsMidway())
    rows = writer_batch.run_quiet_windows(end_user_ids=ids, now=T0 + timedelta(hours=1))
    memory = Memory.objects.get(end_user_id=target)
    assert "Works from the Delhi office." in memory.lines  # the team's edit survives
    assert len(memory.lines) > 1  # and the run read their chat on top of it
    quiet = memory.runs.filter(kind=MemoryRun.Kind.QUIET)
    assert quiet.count() == 1 and quiet.get().messages_read == 2  # read once, after the edit
    assert len(rows) == 3


@pytest.mark.django_db
def test_an_engine_failure_in_a_batch_is_recorded_for_that_person_only(team, user, monkeypatch):
    agent, ids = batch_of(team, user, 3, at=T0)
    offline = writer.get_engine()

    class FailsOnce:
        name = "flaky"
        calls = 0

        def structured(self, **kwargs):
            FailsOnce.calls += 1
            if FailsOnce.calls == 2:
                raise EngineError("the model timed out", code="model_timeout")
            return offline.structured(**kwargs)

    monkeypatch.setattr(writer, "get_engine", lambda: FailsOnce())
    writer_batch.run_quiet_windows(end_user_ids=ids, now=T0 + timedelta(hours=1))
    failed = MemoryRun.objects.filter(memory__agent=agent, status=MemoryRun.Status.FAILED)
    assert failed.count() == 1
    memory = failed.get().memory
    assert memory.text == "" and memory.read_up_to is None and memory.last_failure["code"] == "model_timeout"
    assert MemoryRun.objects.filter(memory__agent=agent, status=MemoryRun.Status.SUCCEEDED).count() == 2
    # Its chats stay due for the retry; the others' are answered.
    due = set(
        Conversation.objects.filter(agent=agent, memory_due_at__isnull=False).values_list("end_user_id", flat=True)
    )
    assert due == {memory.end_user_id}


@pytest.mark.django_db
def test_the_sweep_queues_one_task_per_batch(team, user):
    """The tests' django-q runs a queued task at once (Q_SYNC) and records it like a worker does."""
    from django_q.models import Task

    agent, ids = batch_of(team, user, writer_batch.BATCH_SIZE + 2, at=T0)
    swept = writer_sweep.memory_sweep(now=T0 + timedelta(hours=1))
    assert sorted(swept) == sorted(ids)
    tasks = Task.objects.filter(func="memory.tasks.run_quiet_windows")
    assert sorted(len(task.args[0]) for task in tasks) == [2, writer_batch.BATCH_SIZE]
    assert all(task.success for task in tasks)
    assert Memory.objects.filter(agent=agent).exclude(text="").count() == len(ids)


@pytest.mark.django_db
@pytest.mark.parametrize(("people", "tasks"), [(9, [3, 3, 3]), (3, [1, 2]), (1, [1])])
def test_with_a_model_tasks_are_sized_by_its_concurrency(team, user, monkeypatch, settings, people, tasks):
    """With a model, a task holds one wave of calls in flight together (at most MODEL_CONCURRENCY
    people), and the people are spread evenly over at least one task per cluster worker."""
    from django_q.models import Task

    from agents.engines import OpenAIEngine

    assert writer_batch.batch_size() == writer_batch.BATCH_SIZE  # the offline engine
    model = OpenAIEngine(api_key="sk-test-not-used", base_url="http://127.0.0.1:9/v1")
    monkeypatch.setattr(writer, "get_engine", lambda: model)
    settings.MODEL_CONCURRENCY, settings.Q_CLUSTER = 4, {**settings.Q_CLUSTER, "workers": 2}
    assert writer_batch.batch_size() == 4
    _, ids = batch_of(team, user, people, at=T0)
    writer_sweep.memory_sweep(now=T0 + timedelta(hours=1))  # (the model is not there: each run records a failure)
    queued = Task.objects.filter(func="memory.tasks.run_quiet_windows")
    assert sorted(len(task.args[0]) for task in queued) == tasks
    assert sorted(pk for task in queued for pk in task.args[0]) == sorted(ids)
    failed = MemoryRun.objects.filter(status="failed", error="model_unreachable")
    assert sorted(failed.values_list("memory__end_user_id", flat=True)) == sorted(ids)  # each its own failure


@pytest.mark.django_db(transaction=True)
def test_a_tie_on_updated_at_with_another_process_is_committed_again(team, user, caplog):
    """Another transaction holds, uncommitted, the very `updated_at` the batch picks for its first
    memory (the unique index per agent). The batch's UPDATE waits for it, fails on the tie when it
    commits, and the batch is committed again with the free times read anew: every run lands once,
    nobody is committed one by one, and no two memories of the agent share a time."""
    import threading

    from django.db import connections, transaction

    agent, ids = batch_of(team, user, 3, at=T0)
    writer_batch.run_quiet_windows(end_user_ids=ids, now=T0 + timedelta(hours=1))  # their memories exist
    for i in range(3):
        chat(agent, f"u{i}", SAID[(i + 3) % 6 : (i + 3) % 6 + 1], at=T0 + timedelta(hours=1, minutes=1))
    other = chat_start.conversation_start(agent=agent, external_id="other", now=T0).end_user
    services.memory_set(end_user=other, text="Uses the web app.", now=T0)
    now = T0 + timedelta(hours=2)
    holding, release = threading.Event(), threading.Event()

    def other_process():
        try:
            with transaction.atomic():
                Memory.objects.filter(end_user=other).update(updated_at=now)
                holding.set()
                release.wait(10)
        finally:
            connections.close_all()

    thread = threading.Thread(target=other_process)
    thread.start()
    holding.wait(10)
    threading.Timer(0.5, release.set).start()  # it commits while the batch waits on the index
    with caplog.at_level("WARNING", logger="memory.writer.batch"):
        rows = writer_batch.run_quiet_windows(end_user_ids=ids, now=now)
    thread.join(10)
    assert not [r for r in caplog.records if r.name == "memory.writer.batch"]  # committed as a batch, not one by one
    assert len(rows) == 3 and all(r.pk for r in rows)
    quiet = MemoryRun.objects.filter(memory__end_user_id__in=ids, kind=MemoryRun.Kind.QUIET)
    assert quiet.count() == 6
    times = list(Memory.objects.filter(agent=agent).values_list("updated_at", flat=True))
    assert len(times) == len(set(times)) == 4
    assert Memory.objects.get(end_user=other).updated_at == now


def hard_cases(agent, i):
    """Three people a batch once handed to the single run: a chat still active at the run, a
    backlog over one run's 200 messages, and a pending forget with more said after it."""
    talking, _ = chat(agent, f"talking{i}", SAID[4:5], at=T0)
    chat(agent, f"talking{i}", SAID[5:6], at=T0 + timedelta(hours=2))  # active at the run
    backlog, _ = chat(agent, f"backlog{i}", [f"I use the Android app, note {n}." for n in range(205)], at=T0)
    forgets, at = chat(agent, f"forgets{i}", SAID[0:2], at=T0)
    conversation = Conversation.objects.get(end_user_id=forgets)
    end_user_request(conversation, "forget that I work from Pune", now=at + timedelta(seconds=5))
    chat(agent, f"forgets{i}", SAID[5:6], at=at + timedelta(seconds=10))
    return [talking, backlog, forgets]


@pytest.mark.django_db
def test_a_batch_reads_its_hard_cases_itself_in_its_fixed_queries(team, user):
    """An active chat's cutoff, a backlog's first 200 messages and a pending forget's part are each
    person's span in the batch's own reads: as many statements for one of each as for three of
    each, and each is read as a batch of one reads it."""
    counts, states = {}, {}
    for n in (1, 3):
        agent = agent_services.agent_create(team=team, name=f"Hard {n}", user=user, config=CONFIG)
        ids = [pk for i in range(n) for pk in hard_cases(agent, i)]
        with CaptureQueriesContext(connection) as queries:
            rows = writer_batch.run_quiet_windows(end_user_ids=ids, now=T0 + timedelta(hours=2, minutes=1))
        assert len(rows) == len(ids)
        counts[n] = len(queries.captured_queries)
        states[n] = state(agent)
    assert counts[1] == counts[3], counts
    one, _ = states[1]
    assert one["talking0"]["runs"][0][5] == 1  # only what was said before the active chat
    assert one["backlog0"]["runs"][0][5] == 200 and one["backlog0"]["read_up_to"] < timedelta(hours=2)
    assert one["forgets0"]["runs"][0][5] == 2 and one["forgets0"]["forget_pending"] is False  # its part, then let go
    assert "Pune" not in one["forgets0"]["text"]
    single, batched = agents_pair(team, user)
    for agent in (single, batched):
        hard_cases(agent, 0)
    run_both(single, batched, T0 + timedelta(hours=2, minutes=1))
    assert state(single) == state(batched) == (one, states[1][1])
