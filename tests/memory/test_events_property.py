"""Actions say what they did (issue 26), as a property: hypothesis drives random sequences of the
memory's actions (set, a line added, corrected or deleted, stop, resume, delete, an end user's
forget, retention, quiet-window runs that succeed or fail), some of them rolled back, on two end
users, and after every step checks that

- each committed change of a memory sent exactly one `memory_committed` event, with the kind of
  the action that made it, and counts, lines, time and stop that match the row as committed; a
  step that changed nothing sent nothing;
- `memory_changed` (inside the transaction) carried the same events;
- a run sent one event per audit row it wrote (after at most one "read_past" of a forget);
- a rolled-back step committed nothing, sent no `memory_committed` event, and left no webhook
  delivery behind (the outbox rolls back with the change).
"""

from datetime import timedelta
from itertools import count

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agents import services as agent_services
from agents.engines import EngineError
from memory import guards as policy
from memory.models import Memory, MemoryRun
from memory.store import services
from memory.store.end_user_requests import end_user_request
from memory.store.events import LineCounts, memory_changed, memory_committed
from memory.store.rows import memory_row_for
from memory.writer import run as writer
from memory.writer import sweep as writer_sweep
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start
from webhooks import services as webhooks
from webhooks.models import Delivery, Endpoint

USERS = ("u_a", "u_b")
LINES = ("Likes tea.", "Works from the Pune office.", "Prefers email over phone.", "Uses the Android app.")
SAID = ("I like tea.", "I work from the Pune office.", "Please email me.", "I use the Android app.")
FORGET = {0: "forget that I like tea", 1: "forget that I work from Pune"}
ONE_KIND = {  # the kind each single action's change says it is
    "set": "set",
    "add": "edited",
    "edit": "edited",
    "delete_line": "edited",
    "stop": "stopped",
    "resume": "resumed",
    "delete": "deleted",
    "forget": "forgotten",
    "retention": "expired",
}

user = st.integers(min_value=0, max_value=len(USERS) - 1)
line = st.integers(min_value=0, max_value=len(LINES) - 1)
writes = st.one_of(
    st.tuples(st.just("set"), user, st.lists(line, max_size=3, unique=True)),
    st.tuples(st.just("add"), user, line),
    st.tuples(st.just("edit"), user, st.integers(1, 3), line),
    st.tuples(st.just("delete_line"), user, st.integers(1, 3)),
    st.tuples(st.just("forget"), user, st.sampled_from(sorted(FORGET))),
)
reads = st.one_of(
    st.tuples(st.just("chat"), user, line), st.tuples(st.just("sweep"), st.sampled_from([False, False, True]))
)
takes_away = st.one_of(
    st.tuples(st.just("stop"), user),
    st.tuples(st.just("resume"), user),
    st.tuples(st.just("delete"), user),
    st.tuples(st.just("retention")),
)
action = st.one_of(writes, writes, reads, reads, takes_away)
step = st.tuples(action, st.sampled_from([False, False, False, True]))  # (action, rolled back)

_agents = count()


class Rollback(Exception):
    pass


class Failing:
    name = "failing"

    def structured(self, **kwargs):
        raise EngineError("the model timed out", code="model_timeout")


def state(agent):
    """Each end user's memory row as committed, and how many audit rows it has."""
    out = {}
    for memory in Memory.objects.filter(agent=agent).select_related("end_user"):
        out[memory.end_user.external_id] = (
            memory.text,
            memory.stopped_at,
            memory.read_up_to,
            memory.horizon_at,
            memory.forget_pending,
            memory.updated_at,
            memory.last_run,
            memory.last_failure,
            memory.runs.count(),
        )
    return out


class World:
    def __init__(self, agent, monkeypatch):
        self.agent, self.monkeypatch = agent, monkeypatch
        self.now = timezone.now().replace(microsecond=0)
        self.end_users = {u: agent_services.end_user_get_or_create(agent=agent, external_id=u) for u in USERS}
        for end_user in self.end_users.values():
            memory_row_for(end_user, self.now)  # every step starts from a row: its creation is no change
        self.conversations = {}

    def tick(self, minutes=1):
        self.now += timedelta(minutes=minutes)

    def conversation(self, u):
        if u not in self.conversations:
            self.conversations[u] = chat_start.conversation_start(agent=self.agent, external_id=u, now=self.now)
        return self.conversations[u]

    def do(self, name, *args):
        """One step, by name (`step_<name>`); a refusal changes nothing, which the checks see."""
        self.tick()
        end_user = self.end_users[USERS[args[0]]] if args and name != "sweep" else None
        try:
            getattr(self, f"step_{name}")(end_user, *args)
        except policy.MemoryRefused:
            pass

    def step_set(self, end_user, _, lines):
        services.memory_set(end_user=end_user, text="\n".join(LINES[i] for i in lines), now=self.now)

    def step_add(self, end_user, _, line):
        services.memory_line_add(end_user=end_user, text=LINES[line], now=self.now)

    def step_edit(self, end_user, _, index, line):
        services.memory_line_edit(end_user=end_user, index=index, text=LINES[line], was=None, now=self.now)

    def step_delete_line(self, end_user, _, index):
        services.memory_line_delete(end_user=end_user, index=index, was=None, now=self.now)

    def step_stop(self, end_user, _):
        services.memory_stop(end_user=end_user, now=self.now)

    def step_resume(self, end_user, _):
        services.memory_resume(end_user=end_user, now=self.now)

    def step_delete(self, end_user, _):
        services.memory_delete(end_user=end_user, now=self.now)

    def step_forget(self, end_user, u, which):
        end_user_request(self.conversation(USERS[u]), FORGET[which], now=self.now)

    def step_chat(self, end_user, u, said):
        conversation = self.conversation(USERS[u])
        chat_record.message_record(conversation=conversation, kind="user", text=SAID[said], now=self.now)

    def step_sweep(self, _, failing):
        self.tick(61)  # past the quiet window
        if failing:
            with self.monkeypatch.context() as patch:
                patch.setattr(writer, "get_engine", lambda: Failing())
                writer_sweep.memory_sweep(now=self.now, run_inline=True)
        else:
            writer_sweep.memory_sweep(now=self.now, run_inline=True)

    def step_retention(self, _):
        self.tick(40 * 24 * 60)  # past keepForDays
        services.memory_retention_sweep(now=self.now)


def lines_of(text):
    return [x for x in text.split("\n") if x.strip()]


def check_events(name, before, after, committed, heard):
    assert heard == committed, "memory_changed and memory_committed told different stories"
    for u, pk in before["ids"].items():
        was, now = before["rows"][u], after[u]
        sent = [e for e in committed if e.end_user_id == pk]
        if was == now:
            assert sent == [], f"{name}: {u} did not change, yet {[e.kind for e in sent]} was sent"
            continue
        runs_written = now[8] - was[8]
        assert sent, f"{name}: {u} changed, yet nothing was sent"
        last = sent[-1]  # what the memory is now, as the last event of it says
        if name == "sweep":  # one event per run, after at most one read past a forget
            runs = sent[1:] if sent[0].kind == "read_past" else sent
            assert [e.kind for e in runs] in (["run"], ["run_failed"], [])
            assert len(runs) == runs_written and all(e.run is not None for e in runs), "one event per audit row"
        else:
            assert [e.kind for e in sent] == [ONE_KIND[name]], f"{name}: {u} changed once"
            assert (last.run is not None) == (runs_written == 1)
        assert last.counts == LineCounts.between(lines_of(was[0]), lines_of(now[0]))
        assert last.text_changed == (was[0] != now[0])
        assert last.was_stopped == (was[1] is not None)
        assert last.lines == len(lines_of(now[0]))
        assert last.at == now[5] and last.stopped_at == now[1]


@pytest.mark.django_db
@settings(
    max_examples=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(steps=st.lists(step, min_size=1, max_size=20))
# Every kind at least once, beside the random sequences.
@example(
    steps=[
        (("chat", 0, 0), False),
        (("sweep", False), False),
        (("forget", 0, 0), False),
        (("chat", 0, 2), False),
        (("sweep", False), False),
    ]
)
@example(steps=[(("chat", 1, 2), False), (("sweep", True), False), (("stop", 1), False), (("resume", 1), False)])
@example(steps=[(("chat", 0, 1), False), (("sweep", False), True), (("set", 0, [3]), True), (("sweep", False), False)])
def test_each_committed_change_sends_one_event_of_its_kind_and_a_rollback_sends_none(
    team, monkeypatch, django_capture_on_commit_callbacks, steps
):
    agent = agent_services.agent_create(
        team=team,
        name=f"Events {next(_agents)}",
        config={"memorySettings": {"on": True, "quietMinutes": 15, "keepForDays": 30}},
    )
    if not Endpoint.objects.filter(team=team).exists():  # one for every example: the outbox is written
        webhooks.endpoint_create(team=team, url="https://example.com/hook", events=list(webhooks.EVENTS))
    world = World(agent, monkeypatch)
    ids = {u: world.end_users[u].pk for u in USERS}
    heard, committed = [], []

    def on_changed(sender, event, **kwargs):
        if event.agent_id == agent.pk:  # the sweeps and retention also reach the earlier examples' agents
            heard.append(event)

    def on_committed(sender, event, **kwargs):
        if event.agent_id == agent.pk:
            committed.append(event)

    memory_changed.connect(on_changed, dispatch_uid="test.heard")
    memory_committed.connect(on_committed, dispatch_uid="test.committed")
    monkeypatch.setattr("webhooks.services._queue", lambda ids: None)  # the outbox only: nothing is sent
    try:
        for (name, *args), rolled_back in steps:
            before = {"rows": state(agent), "ids": ids}
            deliveries = Delivery.objects.count()
            heard.clear()
            committed.clear()
            with django_capture_on_commit_callbacks(execute=True):
                if rolled_back:
                    with pytest.raises(Rollback), transaction.atomic():
                        world.do(name, *args)
                        raise Rollback
                else:
                    world.do(name, *args)
            if rolled_back:
                assert committed == [], f"{name} rolled back, yet {[e.kind for e in committed]} was committed"
                assert state(agent) == before["rows"] and Delivery.objects.count() == deliveries
                world.conversations.clear()  # a chat begun inside the rollback is gone
                continue
            check_events(name, before, state(agent), committed, heard)
            assert MemoryRun.objects.filter(memory__agent=agent).count() == sum(r[8] for r in state(agent).values())
    finally:
        memory_changed.disconnect(dispatch_uid="test.heard")
        memory_committed.disconnect(dispatch_uid="test.committed")
