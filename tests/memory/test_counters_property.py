"""The R21 fields a memory row keeps beside its text (issue 29: `external_id`, `last_chat_at`,
`agreed_at`, `conversations`, memory.store.counters), as a property: hypothesis drives random
sequences of what changes them or makes the row (chats begun, the person's and the agent's
messages, actions, consent yes and no, a team's set, delete, stop and resume, quiet-window runs, an
erase), on three end users, and after every step each memory row's fields equal a recount from
their sources, and memory.get and a page answer what the sources say."""

from datetime import timedelta
from itertools import count

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agents import services as agent_services
from agents.models import Conversation, EndUser
from consent import services as consent_services
from consent.models import Consent
from memory import guards as policy
from memory.models import Memory
from memory.store import services
from memory.store.selectors import api_memory_read, memories_page
from memory.writer import sweep as writer_sweep
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start

USERS = ("u_a", "u_b", "u_c")
user = st.integers(min_value=0, max_value=len(USERS) - 1)
step = st.one_of(
    st.tuples(st.just("start"), user),
    st.tuples(st.just("say"), user),
    st.tuples(st.just("reply"), user),
    st.tuples(st.just("action"), user),
    st.tuples(st.just("consent"), user, st.booleans()),
    st.tuples(st.just("set"), user),
    st.tuples(st.just("delete"), user),
    st.tuples(st.just("stop"), user),
    st.tuples(st.just("resume"), user),
    st.tuples(st.just("sweep")),
    st.tuples(st.just("erase"), user),
)
_agents = count()


def recount(end_user_id):
    end_user = EndUser.objects.get(pk=end_user_id)
    consent = Consent.objects.filter(end_user=end_user, agreed_at__isnull=False).first()
    chats = Conversation.objects.filter(end_user=end_user, messages__isnull=False).distinct().count()
    return end_user.external_id, end_user.last_chat_at, consent.agreed_at if consent else None, chats


class World:
    def __init__(self, agent):
        self.agent, self.now = agent, timezone.now() - timedelta(days=1)
        self.chats: dict[str, Conversation] = {}

    def end_user(self, u):
        return agent_services.end_user_get_or_create(agent=self.agent, external_id=USERS[u])

    def chat(self, u):
        if USERS[u] not in self.chats:
            self.step_start(u)
        return self.chats[USERS[u]]

    def do(self, name, *args):
        self.now += timedelta(minutes=20)  # past the quiet window: a sweep finds the chats said before
        try:
            getattr(self, f"step_{name}")(*args)
        except policy.MemoryRefused:  # a set on a stopped memory: nothing changed
            pass

    def step_start(self, u):
        self.chats[USERS[u]] = chat_start.conversation_start(agent=self.agent, external_id=USERS[u], now=self.now)

    def step_say(self, u):
        chat_record.message_record(conversation=self.chat(u), kind="user", text="Please email me.", now=self.now)

    def step_reply(self, u):
        chat_record.message_record(conversation=self.chat(u), kind="agent", text="Noted.", now=self.now)

    def step_action(self, u):
        chat_record.action_run_record(conversation=self.chat(u), name="renew_plan", status="succeeded", now=self.now)

    def step_consent(self, u, agreed):
        consent_services.consent_set(end_user=self.end_user(u), agreed=agreed, source="api", now=self.now)

    def step_set(self, u):
        services.memory_set(end_user=self.end_user(u), text="Prefers email over phone.", now=self.now)

    def step_delete(self, u):
        services.memory_delete(end_user=self.end_user(u), now=self.now)

    def step_stop(self, u):
        services.memory_stop(end_user=self.end_user(u), now=self.now)

    def step_resume(self, u):
        services.memory_resume(end_user=self.end_user(u), now=self.now)

    def step_sweep(self):
        writer_sweep.memory_sweep(now=self.now, run_inline=True)

    def step_erase(self, u):
        services.end_user_erase(end_user=self.end_user(u))
        self.chats.pop(USERS[u], None)


def check(agent):
    for memory in Memory.objects.filter(agent=agent):
        kept = (memory.external_id, memory.last_chat_at, memory.agreed_at, memory.conversations)
        assert kept == recount(memory.end_user_id), memory.external_id
    page = {read["endUserId"]: read for read in memories_page(agent_id=agent.pk, limit=50)[0]}
    for end_user in EndUser.objects.filter(agent=agent):
        _, read = api_memory_read(
            team_id=agent.team_id, agent_public_id=agent.public_id, external_id=end_user.external_id
        )
        _, last_chat_at, agreed_at, chats = recount(end_user.pk)
        assert (read["lastChatAt"], read["agreedAt"], read["conversations"]) == (last_chat_at, agreed_at, chats)
        if end_user.external_id in page:
            assert page[end_user.external_id] == read


@pytest.mark.django_db
@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(steps=st.lists(step, min_size=1, max_size=25))
@example(steps=[("say", 0), ("consent", 0, True), ("sweep",), ("reply", 0), ("start", 0), ("reply", 0), ("say", 0)])
@example(steps=[("reply", 1), ("set", 1), ("start", 1), ("say", 1), ("consent", 1, False), ("stop", 1), ("erase", 1)])
@example(steps=[("set", 2), ("consent", 2, True), ("start", 2), ("reply", 2), ("consent", 2, False), ("say", 2)])
def test_the_fields_kept_on_the_row_equal_a_recount(team, steps):
    agent = agent_services.agent_create(
        team=team, name=f"Counters {next(_agents)}", config={"memorySettings": {"on": True, "quietMinutes": 15}}
    )
    world = World(agent)
    for name, *args in steps:
        world.do(name, *args)
        check(agent)
