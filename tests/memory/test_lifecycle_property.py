"""The memory's promises over time, as a property (issue 9): hypothesis drives random sequences of
chats, sweeps at random times, stop, stop(false), delete, forget, retention, memory off and on,
version changes, Apply and erase on a few end users, and after every step checks:

- nothing said before a stop, delete, forget or expiry comes back (every line traces to something
  the person said, in a chat that used memory, after the last of those);
- a stopped memory holds no text;
- `read_up_to` never moves back;
- a chat is read under its own version: a line the defaults leave out (a food allergy) only
  appears from a chat begun on a version that opened it, read while the published one does too;
- at most 30 lines;
- every chat that uses memory carries the note of the memory as it is now.

The writer runs inline (the sweep's `run_inline`; Apply runs through django-q's sync mode in the
test settings) with a scripted model, so the subject is the lifecycle, not the queue or the rules.
Bounded: 60 sequences of up to 30 steps, about twenty seconds.
"""

from datetime import timedelta
from itertools import count

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agents import services as agent_services
from agents.engines import EngineResult
from agents.models import AgentVersion, Conversation, EndUser
from memory import guards as policy
from memory.models import Memory
from memory.store import services
from memory.store.note import note_lines, render_note
from memory.tools import apply
from memory.writer import run as writer
from memory.writer import sweep as writer_sweep
from surfaces.chat import send as chat
from surfaces.chat import start as chat_start

USERS = ("u_a", "u_b")
ALLERGY = "Allergic to peanuts."
OPENS_ALLERGIES = "Keep food allergies."
FACTS = {  # trigger word in a message -> the line the scripted model proposes
    "pune": "Works from the Pune office.",
    "email": "Prefers email over phone.",
    "peanut": ALLERGY,
    **{f"topic{n}": f"Likes topic {n}." for n in range(36)},  # enough to reach the 30-line cap
}
SAY = {"pune": "I work from the Pune office.", "email": "Please email me.", "peanut": "I'm allergic to peanuts."}
FORGET = {
    "pune": "forget that I work from Pune",
    "email": "forget that I prefer email",
    "peanut": "forget that I'm allergic to peanuts",
}


class Scripted:
    """Adds FACTS[word] for each trigger word in a message (citing it), keeps every line; in review
    (Apply) removes the allergy line unless the published instructions keep allergies."""

    name = "scripted"

    def structured(self, *, task, system, payload, schema):
        review = payload["mode"] == "review"
        ops = []
        for line in payload["lines"]:
            drop = review and line["text"] == ALLERGY and OPENS_ALLERGIES not in system
            ops.append({"op": "remove" if drop else "keep", "line": line["n"], "text": None, "sources": []})
        for message in payload["messages"]:
            words = message["text"].lower().replace(".", " ").split()
            for word, line in FACTS.items():
                if word in words or (word in ("pune", "email", "peanut") and word in message["text"].lower()):
                    ops.append({"op": "add", "line": None, "text": line, "sources": [message["id"]]})
        return EngineResult(data={"operations": ops}, engine=self.name)

    def reply(self, *, task, system, messages):
        return EngineResult(data="Sure.", engine=self.name)


user_index = st.integers(min_value=0, max_value=len(USERS) - 1)
named = st.sampled_from(["pune", "email", "peanut"])
topics = st.lists(st.integers(0, 35), min_size=1, max_size=14, unique=True).map(
    lambda ns: " ".join(f"topic{n}" for n in ns)
)
fact = st.one_of(named, named, named, topics)
chat_step = st.tuples(st.just("chat"), user_index, fact, st.booleans(), st.sampled_from([True, True, True, False]))
sweep_step = st.tuples(st.just("sweep"), st.integers(min_value=0, max_value=120))
step = st.one_of(
    chat_step,
    chat_step,
    chat_step,
    sweep_step,
    sweep_step,
    st.tuples(st.just("stop"), user_index),
    st.tuples(st.just("resume"), user_index),
    st.tuples(st.just("delete"), user_index),
    st.tuples(st.just("forget"), user_index, st.sampled_from(["pune", "email", "peanut"])),
    st.tuples(st.just("retention"), st.integers(min_value=0, max_value=120)),
    st.tuples(st.just("memory"), st.booleans()),
    st.tuples(st.just("version"), st.booleans()),
    st.tuples(st.just("apply")),
    st.tuples(st.just("erase"), user_index),
)

_agents = count()


class World:
    """What the person said and asked, kept beside the database to check it against."""

    def __init__(self, agent):
        self.agent = agent
        self.now = timezone.now().replace(microsecond=0)
        self.open: dict[str, Conversation] = {}
        self.said: dict[str, list[tuple]] = {u: [] for u in USERS}  # (at, word, chat opens allergies)
        self.barrier: dict[str, object] = {u: None for u in USERS}  # last stop, delete or expiry
        self.forgot: dict[str, dict] = {u: {} for u in USERS}  # word -> when
        self.read_up_to: dict[str, object] = {u: None for u in USERS}

    def tick(self, minutes=1):
        self.now += timedelta(minutes=minutes)

    def published_opens(self) -> bool:
        config = AgentVersion.objects.published(self.agent).config
        return OPENS_ALLERGIES in config["memorySettings"]["instructions"]

    def end_user(self, u):
        return agent_services.end_user_get_or_create(agent=self.agent, external_id=u)

    def memory(self, u):
        return Memory.objects.filter(end_user__agent=self.agent, end_user__external_id=u).first()

    # --- steps ---

    def chat(self, u, word, new_chat, memory_flag):
        conversation = self.open.get(u)
        if new_chat or conversation is None:
            conversation = chat_start.conversation_start(
                agent=self.agent, external_id=u, memory=memory_flag, now=self.now
            )
            self.open[u] = conversation
        self.tick()
        text = SAY.get(word, f"I like {word}.")
        chat.conversation_send(conversation=Conversation.objects.get(pk=conversation.pk), text=text, now=self.now)
        if conversation.uses_memory:
            opens = OPENS_ALLERGIES in conversation.version.config["memorySettings"]["instructions"]
            for one in word.split():
                self.said[u].append((self.now, one, opens))

    def sweep(self, minutes):
        self.tick(minutes)
        before = {u: set(self.memory(u).lines) if self.memory(u) else set() for u in USERS}
        opens_now = self.published_opens()
        writer_sweep.memory_sweep(now=self.now, run_inline=True)
        for u in USERS:
            memory = self.memory(u)
            new = (set(memory.lines) if memory else set()) - before[u]
            if ALLERGY in new:  # read under the stricter of the chat's version and the published one
                assert opens_now, "an allergy was kept while the published version leaves allergies out"
                assert any(w == "peanut" and opens for _, w, opens in self.allowed(u)), (
                    "kept from a chat begun on a version that left it out"
                )

    def stop(self, u, stop=True):
        self.tick()
        memory = self.memory(u)
        was_stopped = memory is not None and memory.stopped_at is not None
        (services.memory_stop if stop else services.memory_resume)(end_user=self.end_user(u), now=self.now)
        if stop or was_stopped:  # a resume of a memory that was not stopped changes nothing
            self.barrier[u] = self.now
        self.open.pop(u, None)  # a chat begun while stopped does not use memory; begin anew after

    def delete(self, u):
        self.tick()
        services.memory_delete(end_user=self.end_user(u), now=self.now)
        self.barrier[u] = self.now

    def forget(self, u, word):
        conversation = chat_start.conversation_start(agent=self.agent, external_id=u, now=self.now)
        self.tick()
        chat.conversation_send(conversation=conversation, text=FORGET[word], now=self.now)
        memory = self.memory(u)
        if memory is None or memory.stopped_at is None:
            self.forgot[u][word] = self.now

    def retention(self, days):
        self.tick(days * 24 * 60)
        held = {u: bool(self.memory(u) and self.memory(u).text) for u in USERS}
        services.memory_retention_sweep(now=self.now)
        for u in USERS:
            memory = self.memory(u)
            emptied = held[u] and not memory.text
            if memory is not None and (emptied or memory.horizon_at == self.now):  # expired
                self.barrier[u] = self.now

    def set_memory(self, on):
        agent_services.agent_update(agent=self.agent, changes={"memorySettings": {"on": on}})

    def version(self, opens):
        agent_services.agent_update(
            agent=self.agent, changes={"memorySettings": {"instructions": OPENS_ALLERGIES if opens else ""}}
        )

    def apply(self):
        before = {u: set(self.memory(u).lines) if self.memory(u) else set() for u in USERS}
        try:
            apply.apply_start(agent=self.agent)  # runs inline (Q_SYNC)
        except Exception as exc:  # an Apply already active cannot happen inline; anything else is a failure
            raise AssertionError(f"Apply failed: {exc!r}") from exc
        for u in USERS:
            memory = self.memory(u)
            assert (set(memory.lines) if memory else set()) <= before[u], "Apply added a line"

    def erase(self, u):
        end_user = EndUser.objects.filter(agent=self.agent, external_id=u).first()
        if end_user is not None:
            services.end_user_erase(end_user=end_user)
        self.said[u], self.barrier[u], self.forgot[u], self.read_up_to[u] = [], None, {}, None
        self.open.pop(u, None)

    # --- the invariants ---

    def allowed(self, u):
        """What they said that may still feed their memory: after the last barrier and forget."""
        return [
            (at, word, opens)
            for at, word, opens in self.said[u]
            if (self.barrier[u] is None or at > self.barrier[u])
            and (word not in self.forgot[u] or at > self.forgot[u][word])
        ]

    def check(self):
        for u in USERS:
            memory = self.memory(u)
            if memory is None:
                continue
            lines = memory.lines
            assert len(lines) <= policy.MAX_LINES
            if memory.stopped_at is not None:
                assert memory.text == ""
            sources = {FACTS[word] for _, word, _ in self.allowed(u)}
            assert set(lines) <= sources, (
                f"{u}: {set(lines) - sources} came back from before a stop, delete, forget or expiry"
            )
            if self.read_up_to[u] is not None:
                assert memory.read_up_to is not None and memory.read_up_to >= self.read_up_to[u], (
                    "read_up_to moved back"
                )
            self.read_up_to[u] = memory.read_up_to
            note = render_note(note_lines(memory))
            stale = Conversation.objects.filter(end_user=memory.end_user, uses_memory=True).exclude(memory_note=note)
            assert not stale.exists(), "a chat that uses memory carries an old note"


# Each step of a drawn sequence, by name, done to the world (a user by index into USERS).
STEPS = {
    "chat": lambda world, u, word, new_chat, memory_flag: world.chat(USERS[u], word, new_chat, memory_flag),
    "sweep": lambda world, minutes: world.sweep(minutes),
    "stop": lambda world, u: world.stop(USERS[u]),
    "resume": lambda world, u: world.stop(USERS[u], stop=False),
    "delete": lambda world, u: world.delete(USERS[u]),
    "forget": lambda world, u, word: world.forget(USERS[u], word),
    "retention": lambda world, days: world.retention(days),
    "memory": lambda world, on: world.set_memory(on),
    "version": lambda world, opens: world.version(opens),
    "apply": lambda world: world.apply(),
    "erase": lambda world, u: world.erase(USERS[u]),
}


@pytest.mark.django_db
@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(steps=st.lists(step, min_size=1, max_size=30))
# The sequences each promise was first broken by, always run beside the random ones.
@example(steps=[("chat", 0, "pune", True, True), ("delete", 0), ("chat", 0, "email", False, True), ("sweep", 60)])
@example(
    steps=[
        ("chat", 0, "pune", True, True),
        ("sweep", 60),
        ("chat", 0, "email", True, True),
        ("retention", 40),
        ("chat", 0, "peanut", True, True),
        ("sweep", 60),
    ]
)
@example(
    steps=[
        ("chat", 0, "pune", True, True),
        ("stop", 0),
        ("retention", 40),
        ("resume", 0),
        ("chat", 0, "email", True, True),
        ("sweep", 60),
    ]
)
@example(steps=[("chat", 0, "peanut", True, True), ("version", True), ("sweep", 60)])
@example(steps=[("version", True), ("chat", 0, "peanut", True, True), ("version", False), ("sweep", 60), ("apply",)])
@example(
    steps=[("chat", 0, "pune", True, True), ("chat", 0, "email", False, True), ("forget", 0, "pune"), ("sweep", 60)]
)
@example(
    steps=[
        ("chat", 0, " ".join(f"topic{n}" for n in range(18)), True, True),
        ("chat", 0, " ".join(f"topic{n}" for n in range(18, 36)), True, True),
        ("sweep", 60),
    ]
)
def test_the_memorys_promises_hold_over_any_sequence(team, monkeypatch, steps):
    scripted = Scripted()
    monkeypatch.setattr(writer, "get_engine", lambda: scripted)
    monkeypatch.setattr(chat, "get_engine", lambda: scripted)
    agent = agent_services.agent_create(
        team=team,
        name=f"Prop {next(_agents)}",
        config={"memorySettings": {"on": True, "quietMinutes": 15, "keepForDays": 30}},
    )
    world = World(agent)
    for action, *args in steps:
        STEPS[action](world, *args)
        world.check()
    # Finally everything quiet is read, and the promises still hold.
    world.sweep(24 * 60)
    world.check()
