"""Try is the writer (issue 25): Try's preview reads what a real run reads (from `read_up_to`, a
pending forget with its exclusion), through the same proposal and guards, with the draft
instructions. After the team corrects a line (Pune to Mumbai) and deletes another, Try must bring
neither back, as the Apply preview and a real run do not; and on what no run has read yet, Try's
lines are, line by line, the lines a real run writes once the draft is published. Both with the
offline engine and with a model over HTTP (the local OpenAI-compatible server)."""

import json
from datetime import timedelta

import pytest

from agents import services as agent_services
from agents.models import Conversation
from memory.models import Memory
from memory.store import services
from memory.tools import trial
from memory.tools.apply_preview import apply_preview
from memory.writer import sweep as writer_sweep
from tests.fake_openai import chat_json
from tests.memory.seed import T0, chat, chat_and_remember

pytestmark = pytest.mark.django_db

PUNE, MUMBAI = "Works from the Pune office.", "Works from the Mumbai office."
EMAIL = "Prefers email over phone."
FIRST_CHAT = [("user", "I work from the Pune office."), ("user", "Please email me, I prefer email over phone.")]
LATER_CHAT = [("user", "I prefer WhatsApp now."), ("user", "I work from the Pune office.")]
DRAFT = "Keep which office they work from."


def naive_model(body):
    """A model that believes every message it is shown: an office named in a message replaces the
    office line (or is added), an e-mail preference is added, in review everything is kept. Shown
    an old chat again, it would turn Mumbai back into Pune."""
    payload = json.loads(body["messages"][1]["content"])
    operations, said = [], {}
    for message in payload["messages"]:
        text = message["text"].lower()
        if "pune" in text:
            said[PUNE] = message["id"]
        if "email" in text:
            said[EMAIL] = message["id"]
    for line in payload["lines"]:
        if payload["mode"] == "write" and "office" in line["text"] and PUNE in said and line["text"] != PUNE:
            operations.append({"op": "replace", "line": line["n"], "text": PUNE, "sources": [said.pop(PUNE)]})
        else:
            operations.append({"op": "keep", "line": line["n"], "text": None, "sources": []})
            said.pop(line["text"], None)
    if payload["mode"] == "write":
        for text, source in said.items():
            operations.append({"op": "add", "line": None, "text": text, "sources": [source]})
    return chat_json({"operations": operations})


@pytest.fixture(params=["offline", "openai"])
def engine(request):
    if request.param == "openai":
        server = request.getfixturevalue("openai_engine")
        server.default = naive_model
        return server
    return None


def corrected_by_the_team(agent, user):
    """u_ananya's first chat read by a real run, then the team corrects Pune to Mumbai and
    deletes the e-mail line."""
    _, last = chat_and_remember(agent, "u_ananya", FIRST_CHAT)
    memory = Memory.objects.get(end_user__external_id="u_ananya")
    assert set(memory.lines) == {PUNE, EMAIL}, memory.lines
    services.memory_line_edit(
        end_user=memory.end_user, index=memory.lines.index(PUNE) + 1, text=MUMBAI, was=PUNE, actor=user
    )
    memory.refresh_from_db()
    services.memory_line_delete(end_user=memory.end_user, index=memory.lines.index(EMAIL) + 1, was=EMAIL, actor=user)
    memory.refresh_from_db()
    assert memory.lines == [MUMBAI]
    return memory, last


def draft_config(agent, user):
    agent_services.agent_draft_update(agent=agent, changes={"memorySettings": {"instructions": DRAFT}}, user=user)
    return agent_services.agent_draft_config(agent)


def test_try_after_a_correction_and_a_deletion_brings_neither_back(agent, user, engine):
    memory, _ = corrected_by_the_team(agent, user)
    person = trial.trial_run(agent=agent, config=draft_config(agent, user)).people[0]
    assert not person.error
    assert person.after == [MUMBAI], person.after
    assert [(r.status, r.old, r.new) for r in person.rows] == [("same", MUMBAI, MUMBAI)]
    # The Apply preview and a real run agree: nothing brings Pune or the deleted line back.
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"instructions": DRAFT}})
    preview = apply_preview(agent=agent).people[0]
    assert [(r.status, r.new) for r in preview.rows] == [("same", MUMBAI)]
    writer_sweep.memory_sweep(now=memory.read_up_to + timedelta(days=1), run_inline=True)
    memory.refresh_from_db()
    assert memory.lines == [MUMBAI]


def test_try_writes_line_by_line_what_a_real_run_writes_once_the_draft_is_published(agent, user, engine):
    memory, last = corrected_by_the_team(agent, user)
    conversation, said_last = chat(agent, "u_ananya", LATER_CHAT, start=last + timedelta(hours=2))
    now = said_last + timedelta(hours=2)
    config = draft_config(agent, user)

    person = trial.trial_run(agent=agent, config=config, now=now).people[0]
    assert not person.error and person.messages_read == len(LATER_CHAT)

    agent_services.agent_publish(agent=agent, user=user)
    writer_sweep.memory_sweep(now=now, run_inline=True)
    memory.refresh_from_db()
    assert memory.read_up_to == said_last  # the run read the later chat, and only it
    assert person.after == memory.lines, (person.after, memory.lines)
    assert Conversation.objects.get(pk=conversation.pk).uses_memory


def test_try_reads_a_pending_forget_with_its_exclusion_as_a_run_does(agent, user):
    """Said, then "forget that I work from Pune" before any run read it: neither Try nor the run
    keeps the office."""
    conversation, last = chat(agent, "u_ravi", [FIRST_CHAT[0], FIRST_CHAT[1]], start=T0)
    from surfaces.chat import send as agent_chat

    agent_chat.conversation_send(
        conversation=conversation, text="forget that I work from Pune", now=last + timedelta(minutes=1)
    )
    now = last + timedelta(hours=2)
    assert Memory.objects.get(end_user__external_id="u_ravi").forget_pending
    person = trial.trial_run(agent=agent, config=draft_config(agent, user), now=now).people[0]
    agent_services.agent_publish(agent=agent, user=user)
    writer_sweep.memory_sweep(now=now, run_inline=True)
    memory = Memory.objects.get(end_user__external_id="u_ravi")
    assert PUNE not in person.after and PUNE not in memory.lines
    assert person.after == memory.lines == [EMAIL]
