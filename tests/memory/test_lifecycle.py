"""The memory's promises over time (issue 9): a horizon that outlives the text, one owner for every
write, each chat read under its own version, requests inside longer messages, and the rest.

Most tests here run the writer with a scripted engine (a trigger word in a message proposes one
line, citing it), so what they check is the lifecycle, not the offline rules; the guards in code
(`memory.guards`) are the real ones.
"""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from agents import services as agent_services
from agents.engines import EngineError, EngineResult
from agents.models import AgentVersion, Conversation
from memory.guards.instructions import instruction_checks
from memory.models import ApplyJob, Memory, MemoryRun
from memory.store import services
from memory.store.end_user_requests import recognise
from memory.tools import apply
from memory.writer import run as writer
from memory.writer import sweep as writer_sweep
from surfaces.chat import record as chat_record
from surfaces.chat import send as chat
from surfaces.chat import start as chat_start

FACTS = {
    "pune": "Works from the Pune office.",
    "email": "Prefers email over phone.",
    "peanut": "Allergic to peanuts.",
    "hindi": "Speaks Hindi.",
}


class Scripted:
    """A model stand-in: keeps every line and adds FACTS[word] for each trigger word a message holds."""

    name = "scripted"

    def __init__(self, answer=None):
        self.calls = []
        self.answer = answer  # a fixed answer (e.g. a malformed one) instead of the script

    def structured(self, *, task, system, payload, schema):
        self.calls.append({"system": system, "payload": payload})
        if self.answer is not None:
            if isinstance(self.answer, Exception):
                raise self.answer
            return EngineResult(data=self.answer, engine=self.name)
        ops = [{"op": "keep", "line": line["n"], "text": None, "sources": []} for line in payload["lines"]]
        for message in payload["messages"]:
            for word, line in FACTS.items():
                if word in message["text"].lower():
                    ops.append({"op": "add", "line": None, "text": line, "sources": [message["id"]]})
        return EngineResult(data={"operations": ops}, engine=self.name)


@pytest.fixture
def engine(monkeypatch):
    scripted = Scripted()
    monkeypatch.setattr(writer, "get_engine", lambda: scripted)
    return scripted


T0 = (timezone.now() - timedelta(days=200)).replace(microsecond=0)


def say(agent, external_id, *texts, at, memory=True):
    """A chat of the person's own messages, a minute apart from `at`. Returns (conversation, last)."""
    conversation = chat_start.conversation_start(agent=agent, external_id=external_id, memory=memory, now=at)
    last = at
    for text in texts:
        last += timedelta(minutes=1)
        chat_record.message_record(conversation=conversation, kind="user", text=text, now=last)
    return conversation, last


def sweep(at):
    writer_sweep.memory_sweep(now=at, run_inline=True)


def lines(agent, external_id):
    memory = Memory.objects.filter(end_user__agent=agent, end_user__external_id=external_id).first()
    return memory.lines if memory else []


def end_user_of(agent, external_id):
    return agent_services.end_user_get_or_create(agent=agent, external_id=external_id)


# --- 1 and 8: the horizon outlives the text -----------------------------------------------------


@pytest.mark.parametrize("how", ["delete", "stop_then_resume"])
def test_after_retention_no_chat_from_before_a_delete_or_stop_brings_a_line_back(agent, engine, how):
    _, last = say(agent, "u_1", "I work from the Pune office.", at=T0)
    sweep(last + timedelta(hours=1))
    assert lines(agent, "u_1") == [FACTS["pune"]]
    end_user = end_user_of(agent, "u_1")
    if how == "delete":
        services.memory_delete(end_user=end_user, now=last + timedelta(hours=2))
    else:
        services.memory_stop(end_user=end_user, now=last + timedelta(hours=2))
    # Retention runs long after (keepForDays 90): the row stays, empty, with what it had read.
    expired_at = last + timedelta(days=120)
    call_command("memory_retention", "--as-of", expired_at.isoformat())
    memory = Memory.objects.get(end_user=end_user)
    assert memory.read_up_to >= last + timedelta(hours=2)
    if how == "stop_then_resume":
        assert memory.stopped_at is not None  # the stop survives retention
        services.memory_resume(end_user=end_user, now=expired_at + timedelta(days=1))
    _, later = say(agent, "u_1", "Please email me.", at=expired_at + timedelta(days=2))
    sweep(later + timedelta(hours=1))
    assert lines(agent, "u_1") == [FACTS["email"]]  # never the Pune office again


def test_try_never_replays_chats_from_before_a_delete_expiry_or_forget(agent, engine):
    from memory.tools import trial

    _, last = say(agent, "u_1", "I work from the Pune office.", at=T0)
    sweep(last + timedelta(hours=1))
    services.memory_delete(end_user=end_user_of(agent, "u_1"), now=last + timedelta(hours=2))
    services.memory_retention_sweep(now=last + timedelta(days=120))
    _, later = say(agent, "u_1", "I'm allergic to peanuts, please email me.", at=last + timedelta(days=121))
    sweep(later + timedelta(hours=1))
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1", now=later + timedelta(hours=2))
    chat.conversation_send(
        conversation=conversation, text="forget that I prefer email", now=later + timedelta(hours=2, minutes=1)
    )
    config = AgentVersion.objects.published(agent).config
    draft = {**config, "memorySettings": {**config["memorySettings"], "instructions": "Keep food allergies."}}
    person = trial.trial_run(agent=agent, config=draft, engine=Scripted(), now=later + timedelta(days=1)).people[0]
    assert FACTS["pune"] not in person.after and FACTS["email"] not in person.after
    # The allergy was said on a version that left allergies out: the draft does not reach back either.
    assert FACTS["peanut"] not in person.after


def test_an_expired_memory_is_emptied_and_older_unread_chats_never_come_back(agent, engine):
    _, last = say(agent, "u_1", "I speak Hindi.", at=T0)
    sweep(last + timedelta(hours=1))
    # A chat not yet read when its memory expires (say, the runs were failing):
    _, unread = say(agent, "u_1", "I work from the Pune office.", at=last + timedelta(days=1))
    Conversation.objects.update(memory_due_at=None)
    EndUserModel = type(end_user_of(agent, "u_1"))
    EndUserModel.objects.update(last_chat_at=unread)
    assert services.memory_retention_sweep(now=unread + timedelta(days=91)) == {"expired": 1}
    memory = Memory.objects.get()
    assert (memory.text, memory.read_up_to) == ("", unread + timedelta(days=91))
    assert MemoryRun.objects.filter(kind="retention", removed=1).count() == 1
    _, later = say(agent, "u_1", "Please email me.", at=unread + timedelta(days=92))
    sweep(later + timedelta(hours=1))
    assert lines(agent, "u_1") == [FACTS["email"]]


def test_keep_for_days_counts_from_the_last_change_when_they_never_chatted(agent):
    end_user = end_user_of(agent, "u_api_only")
    services.memory_set(end_user=end_user, text="Prefers email over phone.", now=T0)
    assert end_user.last_chat_at is None
    assert services.memory_retention_sweep(now=T0 + timedelta(days=89)) == {"expired": 0}
    assert services.memory_retention_sweep(now=T0 + timedelta(days=91)) == {"expired": 1}
    assert Memory.objects.get().text == ""


def test_erase_removes_everything_the_horizon_included(agent):
    end_user = end_user_of(agent, "u_1")
    services.memory_stop(end_user=end_user)
    removed = services.end_user_erase(end_user=end_user)
    assert (removed["memories"], removed["endUsers"]) == (1, 1)
    assert not Memory.objects.exists()


# --- One owner -----------------------------------------------------------------------------------


def test_every_write_path_leaves_one_audit_row_through_the_commit(agent, engine, user):
    end_user = end_user_of(agent, "u_1")
    services.memory_set(end_user=end_user, text="Speaks Hindi.", actor=user)
    services.memory_delete(end_user=end_user)
    services.memory_set(end_user=end_user, text="Speaks Hindi.", kind=MemoryRun.Kind.API_SET)
    services.memory_stop(end_user=end_user, kind=MemoryRun.Kind.API_SET)
    kinds = list(MemoryRun.objects.order_by("id").values_list("kind", "added", "removed"))
    assert kinds == [("team_edit", 1, 0), ("team_edit", 0, 1), ("api_set", 1, 0), ("api_set", 0, 1)]


# --- 2: Replace all ------------------------------------------------------------------------------


def test_replace_all_is_prefilled_with_the_lines_not_template_source(member_client, agent):
    end_user = end_user_of(agent, "u_1")
    services.memory_set(end_user=end_user, text="Prefers email over phone.\nSpeaks Hindi.")
    page = member_client.get(reverse("memory:detail", args=[agent.public_id, end_user.pk])).content.decode()
    box = page.split('data-testid="replace-text">')[1].split("</textarea>")[0]
    assert box == "Prefers email over phone.&#10;Speaks Hindi."
    assert "{{" not in page and "join" not in box
    assert 'data-testid="horizon">with their first chat' in page
    # Saving the box as the browser sends it changes nothing.
    member_client.post(
        reverse("memory:replace", args=[agent.public_id, end_user.pk]),
        {"text": "Prefers email over phone.\nSpeaks Hindi."},
    )
    assert lines(agent, "u_1") == ["Prefers email over phone.", "Speaks Hindi."]


# --- 3: a chat is read under the stricter of its version and the published one -----------------


def test_a_widening_never_reaches_back_into_a_chat_begun_before_it(agent, engine):
    _, last = say(agent, "u_1", "I'm allergic to peanuts.", at=T0)
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"instructions": "Keep food allergies."}})
    _, later = say(agent, "u_2", "I'm allergic to peanuts.", at=last)  # begun after: told the new notice
    sweep(later + timedelta(hours=1))
    assert lines(agent, "u_1") == []
    assert lines(agent, "u_2") == [FACTS["peanut"]]
    assert MemoryRun.objects.get(memory__end_user__external_id="u_1").dropped == {"health": 1}


def test_a_narrowing_applies_at_once_to_chats_begun_before_it(agent, engine):
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"instructions": "Keep food allergies."}})
    _, last = say(agent, "u_1", "I'm allergic to peanuts.", at=T0)
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"instructions": ""}})
    sweep(last + timedelta(hours=1))
    assert lines(agent, "u_1") == []


def test_the_memory_tab_says_which_version_a_chat_is_read_under(member_client, agent):
    page = member_client.get(reverse("memory:tab", args=[agent.public_id])).content.decode()
    assert "read under the stricter of the version it began on and the published one" in page


# --- 4: stop inside a longer message, in many languages --------------------------------------


@pytest.mark.parametrize(
    "text, lang",
    [
        ("Thanks for the help earlier. Please stop remembering me, I don't like it.", "en"),
        ("ok, delete my data", "en"),
        ("That's all for today. Forget everything!", "en"),
        ("सब कुछ भूल जाओ", "hi"),  # a bare "भूल जाओ" is "forget it" (issue 27), ordinary chat
        ("धन्यवाद। मुझे भूल जाओ।", "hi"),
        ("Gracias por todo, pero borra mis datos.", "es"),
        ("Merci. Oublie-moi.", "fr"),
        ("Danke. Vergiss mich bitte", "de"),
        ("Obrigado! Pare de se lembrar de mim.", "pt"),
    ],
)
def test_a_stop_inside_a_longer_message_is_answered_before_any_model(agent, monkeypatch, text, lang):
    def no_model():
        raise AssertionError("a stop is answered before any model")

    monkeypatch.setattr(chat, "get_engine", no_model)
    end_user = end_user_of(agent, "u_1")
    services.memory_set(end_user=end_user, text="Speaks Hindi.")
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    request = recognise(text)
    assert request is not None and (request.kind, request.lang) == ("stop", lang)
    turn = chat.conversation_send(conversation=conversation, text=text)
    assert turn.handled_as_request
    memory = Memory.objects.get(end_user=end_user)
    assert memory.stopped_at is not None and memory.text == ""


@pytest.mark.parametrize(
    "text",
    [
        "If you stop remembering me, will I have to repeat everything?",
        "Please don't stop remembering me. It helps.",
        "Forget everything I said about the printer, it works now",
        "How do I delete my account?",
    ],
)
def test_a_message_that_only_mentions_a_stop_is_not_one(text):
    request = recognise(text)
    assert request is None or request.kind != "stop"


@pytest.mark.parametrize(
    "text, kind, subject",
    [
        ("Thanks for the help! Also, forget that I work from Pune.", "forget", "i work from pune"),
        ("Quick one. What do you remember about me?", "show", ""),
        ("I told my boss to forget that idea. Anyway, how do I renew?", None, None),
        ("Forget it. I'll call later.", None, None),
    ],
)
def test_a_forget_or_show_can_be_one_sentence_of_a_longer_message(agent, text, kind, subject):
    request = recognise(text)
    if kind is None:
        assert request is None
    else:
        assert (request.kind, request.subject) == (kind, subject)
    if kind == "forget":
        services.memory_set(end_user=end_user_of(agent, "u_1"), text="Works from the Pune office.\nSpeaks Hindi.")
        conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
        assert chat.conversation_send(conversation=conversation, text=text).handled_as_request
        assert lines(agent, "u_1") == ["Speaks Hindi."]


# --- 5: a chat without memory does not list the memory --------------------------------------


@pytest.mark.parametrize("start", [{"memory": False}, {"project": "prj_1"}])
def test_what_do_you_remember_in_a_chat_without_memory_lists_nothing(agent, start):
    services.memory_set(end_user=end_user_of(agent, "u_1"), text="Works from the Pune office.")
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1", **start)
    reply = chat.conversation_send(conversation=conversation, text="What do you remember about me?").reply.text
    assert "Pune" not in reply and "does not use memory" in reply and "stop remembering me" in reply


def test_a_chat_without_memory_tells_its_agent_so_and_the_offline_agent_answers_it(agent):
    services.memory_set(end_user=end_user_of(agent, "u_1"), text="Works from the Pune office.")
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1", memory=False)
    assert "This chat does not use memory" in chat.system_prompt(conversation)
    reply = chat.conversation_send(
        conversation=conversation, text="Hey, do you remember anything about me from before?"
    ).reply.text
    assert "does not use memory" in reply and "Pune" not in reply
    with_memory = chat_start.conversation_start(agent=agent, external_id="u_1")
    assert "does not use memory" not in chat.system_prompt(with_memory)


# --- 6: a stop or delete reaches a chat in progress ------------------------------------------


class Replier:
    name = "replier"

    def __init__(self):
        self.systems = []

    def reply(self, *, task, system, messages):
        self.systems.append(system)
        return EngineResult(data="Sure.", engine=self.name)


def test_the_next_turn_of_an_open_chat_sees_a_stop_or_delete_and_reads_nothing_of_the_memory(
    agent, monkeypatch, django_assert_num_queries
):
    replier = Replier()
    monkeypatch.setattr(chat, "get_engine", lambda: replier)
    end_user = end_user_of(agent, "u_1")
    services.memory_set(end_user=end_user, text="Works from the Pune office.")
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    chat.conversation_send(conversation=Conversation.objects.get(pk=conversation.pk), text="Hello")
    assert "Pune" in replier.systems[-1]
    # A turn when nothing changed: how many queries a turn costs, none of them reading the memory;
    # one writes it: the person's message moves the row's lastChatAt (memory.store.counters).
    loaded = Conversation.objects.select_related("version", "end_user", "agent__team").get(pk=conversation.pk)
    with CaptureQueriesContext(connection) as unchanged:
        chat.conversation_send(conversation=loaded, text="Thanks")
    on_memory = [q["sql"] for q in unchanged.captured_queries if "memory_memory" in q["sql"]]
    assert len(on_memory) == 1 and on_memory[0].startswith('UPDATE "memory_memory" SET "last_chat_at"')
    # The team deletes the memory through the API's service while the chat is open.
    services.memory_delete(end_user=end_user)
    loaded = Conversation.objects.select_related("version", "end_user", "agent__team").get(pk=conversation.pk)
    with django_assert_num_queries(len(unchanged.captured_queries)):
        chat.conversation_send(conversation=loaded, text="What's my office again?")
    assert "Pune" not in replier.systems[-1]
    # A new line (the team's edit) reaches it too, and a stop empties it.
    services.memory_set(end_user=end_user, text="Speaks Hindi.")
    chat.conversation_send(conversation=Conversation.objects.get(pk=conversation.pk), text="Hi")
    assert "Speaks Hindi." in replier.systems[-1]
    services.memory_stop(end_user=end_user)
    chat.conversation_send(conversation=Conversation.objects.get(pk=conversation.pk), text="Hi again")
    assert "Speaks Hindi." not in replier.systems[-1] and "<memory>" not in replier.systems[-1]


# --- 7: before pages exactly (tests/memory/test_api.py has the HTTP side) --------------------


def test_writes_that_would_tie_move_on_by_a_microsecond(agent, engine):
    at = timezone.now()
    for i in range(5):
        services.memory_set(end_user=end_user_of(agent, f"u_{i}"), text="Speaks Hindi.", now=at)
    times = sorted(Memory.objects.values_list("updated_at", flat=True))
    assert times == [at + timedelta(microseconds=i) for i in range(5)]


# --- 9: Apply reviews failed memories again on Resume ----------------------------------------


def test_resume_reviews_again_the_memories_whose_review_failed(agent, user, monkeypatch):
    for i in range(4):
        services.memory_set(end_user=end_user_of(agent, f"u_{i}"), text="Works from the Pune office.\nSpeaks Hindi.")
    agent_services.agent_update(
        agent=agent, changes={"memorySettings": {"instructions": "Do not keep office locations."}}
    )
    monkeypatch.setattr("django_q.tasks.async_task", lambda *a, **k: None)
    job = apply.apply_start(agent=agent, user=user)
    flaky = {"n": 0}

    class Flaky(Scripted):
        def structured(self, **kwargs):
            flaky["n"] += 1
            if flaky["n"] == 2:  # the second memory's review fails once; the job goes on
                raise EngineError("The model did not answer in time.", code="model_timeout")
            lines_ = kwargs["payload"]["lines"]
            ops = [
                {"op": "remove" if "Pune" in line["text"] else "keep", "line": line["n"], "text": None, "sources": []}
                for line in lines_
            ]
            return EngineResult(data={"operations": ops}, engine=self.name)

    assert apply.apply_job_step(job.pk, engine=Flaky(), enqueue_next=False) == "done"
    job.refresh_from_db()
    assert (job.reviewed, job.failed, job.unreviewed) == (3, 1, 1)
    page_job = ApplyJob.objects.get(pk=job.pk)
    assert len(page_job.failed_ids) == 1
    job = apply.apply_resume(job=job)
    assert apply.apply_job_step(job.pk, engine=Flaky(), enqueue_next=False) == "done"
    job.refresh_from_db()
    assert (job.reviewed, job.failed, job.unreviewed, job.changed) == (4, 0, 0, 4)
    assert not Memory.objects.filter(text__contains="Pune").exists()


# --- 10: a malformed answer is an engine failure ---------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        {"operations": [{"op": "shout", "line": None, "text": "x", "sources": []}]},
        {"operations": [{"op": "remove", "line": 7, "text": None, "sources": []}]},
        {"operations": [{"op": "add", "line": None, "text": "", "sources": ["m1"]}]},
        {"operations": "none"},
    ],
)
def test_a_malformed_answer_reads_nothing_and_is_retried(agent, monkeypatch, answer):
    broken = Scripted(answer=answer)
    monkeypatch.setattr(writer, "get_engine", lambda: broken)
    _, last = say(agent, "u_1", "I work from the Pune office.", at=T0)
    sweep(last + timedelta(hours=1))
    memory = Memory.objects.get()
    assert memory.read_up_to is None and memory.last_failure["code"] == "model_malformed"
    assert MemoryRun.objects.get().status == "failed"
    fixed = Scripted()
    monkeypatch.setattr(writer, "get_engine", lambda: fixed)
    sweep(last + timedelta(hours=2))  # the backoff has passed: read again, this time for good
    assert lines(agent, "u_1") == [FACTS["pune"]]


# --- 11: a forget keeps the rest of the chat -------------------------------------------------


def test_a_forget_keeps_everything_else_said_in_that_chat(agent, engine):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1", now=T0)
    for minute, text in enumerate(
        ["I work from the Pune office.", "Please email me, never call.", "I also speak Hindi."], 1
    ):
        chat_record.message_record(
            conversation=conversation, kind="user", text=text, now=T0 + timedelta(minutes=minute)
        )
    turn = chat.conversation_send(
        conversation=conversation, text="Actually, forget that I work from Pune", now=T0 + timedelta(minutes=4)
    )
    assert turn.handled_as_request
    chat_after = T0 + timedelta(minutes=5)
    chat_record.message_record(conversation=conversation, kind="user", text="Thanks!", now=chat_after)
    sweep(chat_after + timedelta(hours=1))
    assert sorted(lines(agent, "u_1")) == sorted([FACTS["email"], FACTS["hindi"]])
    memory = Memory.objects.get()
    assert memory.forget_pending is None  # kept only until read past
    assert memory.horizon_at == T0 + timedelta(minutes=4)
    # Said again after the forget, it is theirs to tell.
    _, later = say(agent, "u_1", "I moved back to the Pune office.", at=chat_after + timedelta(days=1))
    sweep(later + timedelta(hours=1))
    assert FACTS["pune"] in lines(agent, "u_1")


# --- 13: R28 rows where they apply -----------------------------------------------------------


def test_consent_guidance_rows_show_where_they_apply():
    def rows(checks):
        return " ".join(row.look_at for row in checks.guidance)

    plain = instruction_checks("Keep which office they work from.", ask_first=False)
    assert all(law in rows(plain) for law in ("ePrivacy", "CCPA", "CIPA")) and "COPPA" not in rows(plain)
    asked = instruction_checks("Keep which office they work from.", ask_first=True)
    assert "ePrivacy" not in rows(asked) and "CIPA" in rows(asked)
    school = instruction_checks("Keep which class the students are in.", ask_first=True)
    assert "COPPA" in rows(school)
    off = instruction_checks("", ask_first=False, memory_on=False)
    assert off.guidance == []
