"""Try on past conversations (R18): the draft settings on the newest few end users, before and
after per person with added / replaced / removed lines, and nothing saved."""

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from agents import services as agent_services
from memory.models import Memory, MemoryRun, TrialJob
from memory.store import services
from memory.tools import trial
from tests.fake_openai import chat_json
from tests.memory.seed import T0, chat, chat_and_remember, database_fingerprint, remembered

OFFICE_CHAT = [("user", "I work from the Pune office."), ("user", "Please email me, I prefer email over phone.")]


def try_url(agent, n=None):
    url = reverse("memory:try", args=[agent.public_id])
    return f"{url}?n={n}" if n is not None else url


def saved_state() -> dict:
    """The database but the task queue's own table (a Try leaves its task there: the job's id
    only, never a word) and the Try's own rows."""
    return {table: digest for table, digest in database_fingerprint().items() if table != "django_q_task"}


def run_try(client, agent, n=None):
    """Press Try: a POST that starts the job (run inline by the test settings' sync queue), then
    the job's page."""
    return client.post(try_url(agent), {} if n is None else {"n": n}, follow=True)


def draft(agent, user, **settings):
    agent_services.agent_draft_update(agent=agent, changes={"memorySettings": settings}, user=user)


def test_try_shows_today_beside_the_draft_and_saves_nothing(member_client, agent, user):
    for i in range(7):
        chat_and_remember(agent, f"u_{i}", OFFICE_CHAT, start=T0 + timedelta(hours=i))
    # A chat nobody has read yet (its quiet window is over), and a consent row: all must stay as they are.
    chat(agent, "u_6", [("user", "I prefer WhatsApp now.")], start=T0 + timedelta(days=1))
    draft(agent, user, instructions="Do not keep office locations.")
    before = saved_state()
    response = run_try(member_client, agent)
    assert response.status_code == 200
    assert saved_state() == before
    page = response.content.decode()
    assert "Nothing was saved." in page
    assert page.count('data-testid="try-person"') == 5  # the default: the newest five
    for newest in ("u_6", "u_5", "u_4", "u_3", "u_2"):
        assert f'data-end-user="{newest}"' in page
    assert 'data-end-user="u_0"' not in page
    # The draft leaves out offices: today's office line shows as removed.
    assert 'class="try-removed" data-status="removed"' in page and "Works from the Pune office." in page
    # u_6's unread chat says WhatsApp now: the contact line would be replaced.
    assert "~ Prefers to be reached by WhatsApp." in page


def test_try_highlights_added_replaced_and_removed_lines(agent, user):
    # u_added: the email chat is read; a later chat about their office is not yet.
    _, last = chat_and_remember(agent, "u_added", [OFFICE_CHAT[1]])
    chat(agent, "u_added", [OFFICE_CHAT[0]], start=last + timedelta(hours=1))
    assert Memory.objects.get(end_user__external_id="u_added").lines == ["Prefers email over phone."]
    # u_replaced: the team wrote a longer office line; their chat saying the office is unread.
    chat(agent, "u_replaced", OFFICE_CHAT, start=T0 + timedelta(hours=2))
    remembered(agent, "u_replaced", "Works from the Pune office, 3rd floor.\nPrefers email over phone.")
    config = agent_services.agent_draft_config(agent)
    config = {
        **config,
        "memorySettings": {**config["memorySettings"], "instructions": "Keep which office they work from."},
    }
    result = trial.trial_run(agent=agent, config=config, people=5)
    people = {p.end_user.external_id: p for p in result.people}
    added = people["u_added"]
    assert [(r.status, r.old, r.new) for r in added.rows] == [
        ("same", "Prefers email over phone.", "Prefers email over phone."),
        ("added", None, "Works from the Pune office."),
    ]
    assert (added.added, added.replaced, added.removed) == (1, 0, 0)
    assert added.messages_read == 1  # only what no run has read
    replaced = people["u_replaced"]
    assert ("replaced", "Works from the Pune office, 3rd floor.", "Works from the Pune office.") in [
        (r.status, r.old, r.new) for r in replaced.rows
    ]
    # Leaving contact preferences (and offices) out removes that line and adds nothing.
    config["memorySettings"]["instructions"] = "Do not keep contact preferences or office locations."
    removed = {p.end_user.external_id: p for p in trial.trial_run(agent=agent, config=config).people}["u_added"]
    assert [(r.status, r.old) for r in removed.rows] == [("removed", "Prefers email over phone.")]
    assert removed.after == []


def test_try_uses_the_draft_not_the_published_instructions(agent, user, openai_engine):
    openai_engine.default = chat_json({"operations": [{"op": "keep", "line": 1, "text": None, "sources": []}]})
    chat(agent, "u_1", OFFICE_CHAT)
    remembered(agent, "u_1", "Prefers email over phone.")
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"instructions": "PUBLISHED-ONLY"}})
    draft(agent, user, instructions="Keep which office they work from.")
    config = agent_services.agent_draft_config(agent)
    assert config["memorySettings"]["instructions"] == "Keep which office they work from."
    openai_engine.requests.clear()
    trial.trial_run(agent=agent, config=config)
    systems = [r["json"]["messages"][0]["content"] for r in openai_engine.requests]
    assert systems and all("Keep which office they work from." in s and "PUBLISHED-ONLY" not in s for s in systems)
    payloads = [json.loads(r["json"]["messages"][1]["content"]) for r in openai_engine.requests]
    assert [p["mode"] for p in payloads] == ["review", "write"]
    assert "I work from the Pune office." in [m["text"] for m in payloads[1]["messages"]]


def test_a_deleted_memory_does_not_come_back_in_a_try(agent, user):
    _, last = chat_and_remember(agent, "u_1", OFFICE_CHAT)
    end_user = agent.end_users.get(external_id="u_1")
    services.memory_delete(end_user=end_user, now=last + timedelta(hours=2))
    person = trial.trial_run(agent=agent, config=agent_services.agent_draft_config(agent)).people[0]
    assert person.before == [] and person.after == [] and person.messages_read == 0
    assert person.began_at == Memory.objects.get(end_user=end_user).read_up_to
    # A chat after the deletion is read.
    later = timezone.now() - timedelta(hours=2)
    chat(agent, "u_1", [("user", "I work from the Delhi office.")], start=later)
    person = trial.trial_run(agent=agent, config=agent_services.agent_draft_config(agent)).people[0]
    assert person.after == ["Works from the Delhi office."] and person.messages_read == 1


def test_try_reads_from_where_the_memory_has_read_as_a_run_does(agent):
    conversation, last = chat_and_remember(agent, "u_1", OFFICE_CHAT)
    memory = Memory.objects.get(end_user__external_id="u_1")
    config = agent_services.agent_draft_config(agent)
    person = trial.trial_run(agent=agent, config=config).people[0]
    assert person.messages_read == 0 and person.began_at == memory.read_up_to
    assert person.after == memory.lines
    chat(agent, "u_1", [("user", "I prefer phone calls now.")], start=last + timedelta(hours=3))
    person = trial.trial_run(agent=agent, config=config).people[0]
    assert person.messages_read == 1 and person.began_at == memory.read_up_to


def test_chats_without_memory_and_stopped_people_are_not_tried(agent):
    chat(agent, "u_off", OFFICE_CHAT, memory=False)
    chat_and_remember(agent, "u_stopped", OFFICE_CHAT)
    services.memory_stop(end_user=agent.end_users.get(external_id="u_stopped"))
    result = trial.trial_run(agent=agent, config=agent_services.agent_draft_config(agent))
    assert result.people == []


def test_the_page_says_so_when_there_is_nobody_to_try_on(member_client, agent):
    page = run_try(member_client, agent).content.decode()
    assert 'data-testid="try-empty"' in page


@pytest.mark.parametrize("n", ["0", "21", "abc", "-3"])
def test_try_takes_1_to_20_people_and_refuses_anything_else(member_client, agent, n):
    response = run_try(member_client, agent, n)
    assert response.status_code == 400
    assert "Try runs on 1 to 20 end users." in response.content.decode()


def test_try_can_run_on_up_to_20(member_client, agent):
    for i in range(22):
        chat(agent, f"u_{i:02}", [("user", "I prefer email.")], start=T0 + timedelta(minutes=5 * i))
    before = saved_state()
    page = run_try(member_client, agent, 20).content.decode()
    assert page.count('data-testid="try-person"') == 20
    assert saved_state() == before


def test_a_model_failure_shows_for_the_person_and_still_saves_nothing(member_client, agent, openai_engine):
    chat(agent, "u_1", OFFICE_CHAT)
    openai_engine.default = {"status": 500, "body": {"error": {"message": "boom"}}}
    before = saved_state()
    page = run_try(member_client, agent).content.decode()
    assert "The model could not answer" in page
    assert saved_state() == before
    assert not MemoryRun.objects.exists()


def test_try_is_only_for_the_agents_team(agent, other_team):
    client = Client()
    client.force_login(other_team[1])
    assert client.get(try_url(agent)).status_code == 404
    assert client.post(try_url(agent)).status_code == 404
    assert not TrialJob.objects.exists()
