"""Retention covers every memory whatever its history (issue 25, R4), as a property: hypothesis
drives random sequences of memory on/off, the plan gaining or losing memory, sets (through the
API's service, and as an older version wrote them before the gates), chats read by the real
writer, days passing and the retention sweep, and after every step checks that

- a set is refused exactly where memory is not in use (`plan_required` first, then `memory_off`),
  and changes nothing then;
- the database holds exactly the texts of the model beside it, whose retention empties, at each
  sweep, exactly the memories whose rule says their time is up (and no other):
    keepForDays from the last chat (from the last change when they never chatted); and where
    memory is not in use also 30 days from the switch to off, or, when there was no switch (never
    on, or the plan took memory away), 30 days from the memory's last change.
"""

from datetime import timedelta
from itertools import count

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agents import services as agent_services
from agents.models import Agent, EndUser, Plan
from memory import guards as policy
from memory.models import Memory
from memory.store import services
from memory.store.actions import _Draft
from memory.store.rows import commit_changes, memory_locked
from memory.writer import sweep as writer_sweep
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start

USERS = ("u_a", "u_b")
KEEP_FOR_DAYS = 60
OFF_DAYS = 30
PUNE = "I work from the Pune office."

user = st.integers(min_value=0, max_value=len(USERS) - 1)
step = st.one_of(
    st.tuples(st.just("on"), st.booleans()),
    st.tuples(st.just("plan"), st.booleans()),
    st.tuples(st.just("set"), user),
    st.tuples(st.just("set"), user),
    st.tuples(st.just("older_set"), user),
    st.tuples(st.just("chat"), user),
    st.tuples(st.just("chat"), user),
    st.tuples(st.just("days"), st.integers(min_value=1, max_value=45)),
    st.tuples(st.just("days"), st.integers(min_value=1, max_value=45)),
    st.tuples(st.just("retention")),
    st.tuples(st.just("retention")),
)

_agents = count()


class World:
    """The agent's history as the model knows it, and the texts it expects."""

    def __init__(self, agent, *, on: bool):
        self.agent = agent
        self.now = timezone.now().replace(microsecond=0)
        self.on = on
        self.plan_has_memory = True
        self.off_since = None  # when the published version last turned memory off
        self.texts = {u: "" for u in USERS}
        self.sets = count()

    def in_use(self) -> bool:
        return self.on and self.plan_has_memory

    def end_user(self, u) -> EndUser:
        return agent_services.end_user_get_or_create(agent=self.agent, external_id=u)

    def memory(self, u) -> Memory | None:
        return Memory.objects.filter(agent=self.agent, end_user__external_id=u).select_related("end_user").first()

    def tick(self, minutes=1):
        self.now += timedelta(minutes=minutes)

    # --- steps ---

    def switch(self, on):
        self.tick()
        if on and not self.plan_has_memory:
            with pytest.raises(Exception, match="Team plan"):
                agent_services.agent_update(agent=self.agent, changes={"memorySettings": {"on": True}})
            return
        agent_services.agent_update(agent=self.agent, changes={"memorySettings": {"on": on}})
        if self.on and not on:
            self.off_since = self.now
        elif on:
            self.off_since = None
        self.on = on
        # The switch was published at the world's time (the service stamps the wall clock).
        Agent.objects.filter(pk=self.agent.pk).update(memory_off_since=self.off_since)
        self.agent.refresh_from_db()

    def plan(self, has_memory):
        self.tick()
        self.agent.team.plan = Plan.TEAM if has_memory else Plan.PRO
        self.agent.team.save(update_fields=["plan"])
        self.plan_has_memory = has_memory

    def set(self, u):
        self.tick()
        text = f"Likes topic {next(self.sets)}."
        if self.in_use():
            services.memory_set(end_user=self.end_user(u), text=text, now=self.now)
            self.texts[u] = text
            return
        expected = "plan_required" if not self.plan_has_memory else "memory_off"
        with pytest.raises(policy.MemoryRefused) as refused:
            services.memory_set(end_user=self.end_user(u), text=text, now=self.now)
        assert refused.value.reason == expected

    def older_set(self, u):
        """A memory as an older version wrote it, before the plan and the switch gated sets."""
        self.tick()
        text = f"Likes topic {next(self.sets)}."
        with memory_locked(self.end_user(u), self.now) as memory:  # memory_set's change, without its gates
            draft = _Draft(memory, now=self.now)
            draft.lines([text])
            commit_changes([draft.edit("set", source="api_set", actor_id=None)], now=self.now)
        self.texts[u] = text

    def chat(self, u):
        conversation = chat_start.conversation_start(agent=self.agent, external_id=u, now=self.now)
        self.tick()
        chat_record.message_record(conversation=conversation, kind="user", text=PUNE, now=self.now)
        self.tick(61)  # past the quiet window (60 minutes by default)
        writer_sweep.memory_sweep(now=self.now, run_inline=True)  # the real writer, where memory is in use
        memory = self.memory(u)
        if conversation.uses_memory:
            self.texts[u] = memory.text  # what the writer kept is its business, not this property's
        assert conversation.uses_memory == self.in_use()

    def days(self, n):
        self.tick(n * 24 * 60)

    def retention(self):
        self.tick()
        due = {u for u in USERS if self.texts[u] and self.time_is_up(self.memory(u))}
        services.memory_retention_sweep(now=self.now)
        for u in due:
            self.texts[u] = ""

    # --- the rule, written once more here, from R4 and the issue ---

    def time_is_up(self, memory: Memory) -> bool:
        last_seen = memory.end_user.last_chat_at or memory.updated_at
        deadlines = [last_seen + timedelta(days=KEEP_FOR_DAYS)]
        if not self.in_use():
            since = self.off_since if self.off_since is not None else memory.updated_at
            deadlines.append(since + timedelta(days=OFF_DAYS))
        return min(deadlines) < self.now

    def check(self):
        held = dict(Memory.objects.filter(agent=self.agent).values_list("end_user__external_id", "text"))
        assert {u: held.get(u, "") for u in USERS} == self.texts


@pytest.mark.django_db
@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(never_on=st.booleans(), steps=st.lists(step, min_size=1, max_size=20))
# The outside checks: a memory on a never-on agent after 31 days; one set while on, then memory off.
@example(never_on=True, steps=[("older_set", 0), ("days", 31), ("retention",)])
@example(never_on=False, steps=[("set", 0), ("on", False), ("days", 31), ("retention",)])
@example(never_on=False, steps=[("set", 0), ("plan", False), ("days", 31), ("retention",), ("set", 1)])
@example(never_on=False, steps=[("chat", 0), ("on", False), ("days", 20), ("retention",), ("on", True), ("days", 20)])
def test_no_memory_outlives_its_rule_whatever_its_history(team, never_on, steps):
    team.plan = Plan.TEAM  # each example begins on a plan with memory
    team.save(update_fields=["plan"])
    agent = agent_services.agent_create(
        team=team,
        name=f"Retention {next(_agents)}",
        config={"memorySettings": {"on": not never_on, "keepForDays": KEEP_FOR_DAYS}},
    )
    world = World(agent, on=not never_on)
    for action, *args in steps:
        if action == "on":
            world.switch(args[0])
        elif action == "plan":
            world.plan(args[0])
        elif action == "set":
            world.set(USERS[args[0]])
        elif action == "older_set":
            world.older_set(USERS[args[0]])
        elif action == "chat":
            world.chat(USERS[args[0]])
        elif action == "days":
            world.days(args[0])
        elif action == "retention":
            world.retention()
        world.check()
