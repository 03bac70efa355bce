"""The Memory tab (R1-R4, R13, R17, R28): the settings form and its draft, the plan gate, the
readable rules and the exact note, the instruction checks, the runs chart, the Versions tab."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from agents import services as agent_services
from agents.models import AgentDraft, AgentVersion, Plan
from consent.services import consent_set
from memory.guards.instructions import DEFAULT_INSTRUCTIONS
from memory.models import Memory, MemoryRun
from memory.store import services
from memory.store.note import render_note
from memory.tools import apply as memory_apply
from surfaces.chat import start as chat_start
from tests.conftest import make_team
from tests.memory.seed import remembered

FORM = {"on": "on", "instructions": "", "keepForDays": "90", "quietMinutes": "15", "showSwitch": "on"}


def tab(agent):
    return reverse("memory:tab", args=[agent.public_id])


# --- Settings -----------------------------------------------------------------------------


def test_every_setting_goes_to_the_draft_and_the_draft_bar_says_what_changed(member_client, agent):
    response = member_client.post(
        tab(agent),
        {
            "on": "on",
            "instructions": "Keep which office they work from.",
            "keepForDays": "30",
            "quietMinutes": "60",
            "askFirst": "on",
            "privacyUrl": "https://example.com/privacy",
        },
    )
    assert response.status_code == 302
    draft = AgentDraft.objects.get(agent=agent).config["memorySettings"]
    assert draft == {
        "on": True,
        "instructions": "Keep which office they work from.",
        "keepForDays": 30,
        "quietMinutes": 60,
        "showSwitch": False,
        "askFirst": True,
        "privacyUrl": "https://example.com/privacy",
    }
    assert AgentVersion.objects.published(agent).config["memorySettings"]["quietMinutes"] == 15
    bar = member_client.get(tab(agent)).content.decode().split('id="draft-bar"')[1].split("</div>")[0]
    for change in (
        "memory instructions changed",
        "keep for days 90 -&gt; 30",
        "quiet minutes 15 -&gt; 60",
        "show switch off",
        "ask first on",
        "privacy URL (none) -&gt; https://example.com/privacy",
    ):
        assert change in bar
    assert "6 unpublished changes" in bar


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("quietMinutes", "7", "Quiet for: choose 5, 15, 30 or 60 minutes."),
        ("keepForDays", "0", "Keep for: give a whole number of days from 1 to 3650."),
        ("keepForDays", "many", "Keep for: give a whole number of days from 1 to 3650."),
        (
            "privacyUrl",
            "javascript:alert(1)",
            "Privacy policy: give a web address that starts with https:// or http://",
        ),
        (
            "privacyUrl",
            "https://example.com/" + "p" * 600,
            "Privacy policy: give a web address that starts with https:// or http://",
        ),
        ("instructions", "x" * 4001, "Instructions can be at most 4000 characters."),
    ],
)
def test_an_invalid_setting_is_refused_in_plain_words_beside_its_field_and_keeps_what_was_typed(
    member_client, agent, field, value, message
):
    typed = {**FORM, "privacyUrl": "https://example.com/typed", "keepForDays": "45", field: value}
    response = member_client.post(tab(agent), typed)
    assert response.status_code == 400
    page = response.content.decode()
    assert f'data-testid="error-{field}">{message}' in page.replace("&#x27;", "'")
    for api_words in ("memorySettings.", "quietMinutes must", "keepForDays must", "privacyUrl must"):
        assert api_words not in page
    # Every field shows what was typed, not the saved value.
    assert "Keep which office they work from." in page or field == "instructions"
    if field != "keepForDays":
        assert 'value="45"' in page
    if field != "privacyUrl":
        assert 'value="https://example.com/typed"' in page
    assert not AgentDraft.objects.filter(agent=agent).exists()


def test_the_plan_gate_is_a_clear_message_and_turning_memory_on_is_refused(db):
    team, owner = make_team("smallco", plan=Plan.FREE)
    agent = agent_services.agent_create(team=team, name="Helper")
    client = Client()
    client.force_login(owner)
    page = client.get(tab(agent)).content.decode()
    assert 'data-testid="plan-gate">Needs the Team plan or up: this team is on the Free plan' in page
    switch = page.split('id="ms-on"')[1].split(">")[0]
    assert 'name="on"' in switch and " disabled" in switch and "on-plan" in switch  # shown, disabled, says why
    # The refusal is still the view's (and the service's), whatever the page offers.
    response = client.post(tab(agent), FORM)
    assert response.status_code == 400
    refused = response.content.decode()
    assert "Upgrade the team&#x27;s plan to turn it on." in refused
    assert (
        refused.count("Upgrade the team&#x27;s plan to turn it on.") == 2
    )  # the summary's link, and beside the switch
    assert not AgentDraft.objects.filter(agent=agent).exists()
    # Without memory turned on, the other settings save.
    saved = client.post(tab(agent), {key: value for key, value in FORM.items() if key != "on"})
    assert saved.status_code == 302 and AgentDraft.objects.filter(agent=agent).exists()


# --- Readable rules and the note -------------------------------------------------------------


def test_the_tab_shows_the_defaults_then_the_teams_instructions(member_client, agent, user):
    agent_services.agent_draft_update(
        agent=agent, changes={"memorySettings": {"instructions": "Keep which office they work from."}}, user=user
    )
    page = member_client.get(tab(agent)).content.decode()
    defaults = page.split('data-testid="default-instructions">')[1].split("</pre>")[0]
    assert defaults.replace("&quot;", '"').replace("&#x27;", "'") == DEFAULT_INSTRUCTIONS
    assert page.index('data-testid="default-instructions"') < page.index('data-testid="team-instructions"')
    assert 'data-testid="team-instructions">Keep which office they work from.</pre>' in page


def test_the_note_preview_is_exactly_what_a_new_chat_receives(member_client, agent):
    remembered(agent, "u_ananya", "Prefers email over phone.\nMight move to the annual plan (said once, 3 Nov).")
    remembered(agent, "u_ravi", "Speaks Hindi.")
    response = member_client.get(
        reverse("memory:note", args=[agent.public_id]) + "?note_for=u_ananya", HTTP_HX_REQUEST="true"
    )
    shown = response.content.decode().split('data-testid="note-text">')[1].split("</pre>")[0]
    conversation = chat_start.conversation_start(agent=agent, external_id="u_ananya")
    assert conversation.memory_note
    assert shown.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">") == conversation.memory_note
    # On the tab the newest change is previewed by default.
    page = member_client.get(tab(agent)).content.decode()
    assert "Speaks Hindi." in page.split('data-testid="note-preview"')[1].split("</div>")[0]


def test_the_note_preview_says_when_there_is_no_note(member_client, agent):
    remembered(agent, "u_1", "Prefers email over phone.")
    services.memory_stop(end_user=agent.end_users.get(external_id="u_1"))
    url = reverse("memory:note", args=[agent.public_id])
    assert (
        "they asked to stop being remembered"
        in member_client.get(url + "?note_for=u_1", HTTP_HX_REQUEST="true").content.decode()
    )
    assert (
        "There is no end user &ldquo;nobody&rdquo;"
        in member_client.get(url + "?note_for=nobody", HTTP_HX_REQUEST="true").content.decode()
    )
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"on": False}})
    assert (
        "Memory is off in the published version"
        in member_client.get(url + "?note_for=u_1", HTTP_HX_REQUEST="true").content.decode()
    )


def test_a_line_the_policy_refuses_is_not_in_the_note(member_client, agent):
    remembered(agent, "u_1", "Prefers email over phone.")
    Memory.objects.filter(end_user__external_id="u_1").update(text="Prefers email over phone.\nPIN is 4821")
    page = member_client.get(
        reverse("memory:note", args=[agent.public_id]) + "?note_for=u_1", HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Prefers email over phone." in page and "4821" not in page
    assert render_note(["Prefers email over phone."]) in page.replace("&quot;", '"').replace("&lt;", "<").replace(
        "&gt;", ">"
    )


# --- Instruction checks ----------------------------------------------------------------------


def checks_of(page: str) -> str:
    return page.split('data-testid="instruction-checks"')[1].split("</details>")[0]


def test_opening_a_category_recommends_ask_first_and_shows_the_guidance(member_client, agent, user):
    agent_services.agent_draft_update(
        agent=agent, changes={"memorySettings": {"instructions": "Keep food allergies."}}, user=user
    )
    checks = checks_of(member_client.get(tab(agent)).content.decode())
    assert 'data-category="health"' in checks and "health, including allergies" in checks
    assert "&ldquo;Keep food allergies&rdquo;" in checks
    assert "Ask first is recommended" in checks
    assert 'data-tick="ms-ask-first" data-testid="turn-on-ask-first">Turn on ask first</button>' in checks
    assert "GDPR Article 9" in checks and "DPDP Rules" in checks  # the rows that apply
    assert "COPPA" not in checks  # and not the others
    agent_services.agent_draft_update(agent=agent, changes={"memorySettings": {"askFirst": True}}, user=user)
    checks = checks_of(member_client.get(tab(agent)).content.decode())
    assert "Ask first is on." in checks and "Ask first is recommended" not in checks
    assert "turn-on-ask-first" not in checks


def test_instructions_that_feed_decisions_get_a_warning(member_client, agent, user):
    agent_services.agent_draft_update(
        agent=agent,
        changes={"memorySettings": {"instructions": "Note their credit score so we can decide on loans."}},
        user=user,
    )
    page = member_client.get(tab(agent)).content.decode()
    warning = page.split('data-testid="decision-warning"')[1].split("</div>")[0]
    assert "decisions about lending" in warning and "Memory must not feed a decision about a person." in warning
    assert "Automated decisions about people" in checks_of(page)


def test_plain_instructions_need_no_check(member_client, agent, user):
    agent_services.agent_draft_update(
        agent=agent, changes={"memorySettings": {"instructions": "Keep which office they work from."}}, user=user
    )
    page = member_client.get(tab(agent)).content.decode()
    checks = page.split('data-testid="instruction-checks"')[1].split("</span>")[0]
    assert "flash" not in checks  # no warning; the R28 rows that apply to any memory still show
    assert "ePrivacy" in checks and "CCPA" in checks and "CIPA" in checks
    assert "GDPR Article 9" not in checks and "COPPA" not in checks


def test_the_live_check_reads_the_words_being_typed(member_client, agent):
    url = reverse("memory:check", args=[agent.public_id])
    page = member_client.get(
        url, {"instructions": "Remember their religion for holiday greetings"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert 'data-category="religion"' in page and "Ask first is recommended" in page
    page = member_client.get(
        url, {"instructions": "Do not keep allergies", "askFirst": "on"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "data-category" not in page
    assert not AgentDraft.objects.filter(agent=agent).exists()


# --- The chart -------------------------------------------------------------------------------


def test_the_chart_counts_runs_per_day_over_30_days(member_client, agent):
    now = timezone.now()
    today = timezone.localdate()
    memory = remembered(agent, "u_1", "Prefers email over phone.\nSpeaks Hindi.")  # a team edit: +2 today
    MemoryRun.objects.create(
        memory=memory,
        kind="quiet",
        status="succeeded",
        added=1,
        replaced=2,
        removed=3,
        started_at=now - timedelta(days=3),
    )
    MemoryRun.objects.create(memory=memory, kind="quiet", status="failed", started_at=now - timedelta(days=3))
    MemoryRun.objects.create(memory=memory, kind="quiet", status="failed", started_at=now - timedelta(days=40))
    page = member_client.get(reverse("memory:activity", args=[agent.public_id])).content.decode()
    svg = page.split('data-testid="runs-chart"')[1].split("</svg>")[0]
    days = re.findall(
        r'data-day="([\d-]+)" data-added="(\d+)" data-replaced="(\d+)" data-removed="(\d+)" data-failed="(\d+)"', svg
    )
    assert len(days) == 30 and days[-1][0] == today.isoformat()
    by_day = {d[0]: tuple(map(int, d[1:])) for d in days}
    assert by_day[today.isoformat()] == (2, 0, 0, 0)
    assert by_day[(today - timedelta(days=3)).isoformat()] == (1, 2, 3, 1)
    assert sum(v[3] for v in by_day.values()) == 1  # the run 40 days ago is out of range
    assert svg.count('class="seg seg-') == 5
    # Drawn here, with nothing from outside the machine.
    assert not re.search(r'(src|href)="https?://', page)


def test_the_chart_only_counts_this_agents_runs(member_client, agent, team, user):
    other = agent_services.agent_create(team=team, name="Sales", user=user, config={"memorySettings": {"on": True}})
    remembered(other, "u_1", "Speaks Hindi.")
    svg = (
        member_client.get(reverse("memory:activity", args=[agent.public_id]))
        .content.decode()
        .split('data-testid="runs-chart"')[1]
        .split("</svg>")[0]
    )
    assert 'data-added="1"' not in svg


# --- Versions tab ----------------------------------------------------------------------------


def test_versions_compare_any_two_and_restoring_makes_the_draft(member_client, agent, user):
    agent_services.agent_update(
        agent=agent, changes={"memorySettings": {"quietMinutes": 60, "instructions": "Keep their office."}}, user=user
    )
    agent_services.agent_update(
        agent=agent, changes={"memorySettings": {"askFirst": True, "instructions": "Keep their language."}}, user=user
    )
    versions = reverse("agents:versions", args=[agent.public_id])
    page = member_client.get(versions).content.decode()
    assert page.count("<tr") >= 4 and "owner@acme.test" in page
    diff = member_client.get(versions + "?partial=diff&a=1&b=3", HTTP_HX_REQUEST="true").content.decode()
    assert "quiet minutes 15 -&gt; 60" in diff and "ask first on" in diff
    assert "+ Keep their language." in diff
    diff = member_client.get(versions + "?partial=diff&a=2&b=3", HTTP_HX_REQUEST="true").content.decode()
    assert "- Keep their office." in diff and "quiet minutes" not in diff
    member_client.post(reverse("agents:restore", args=[agent.public_id, 1]))
    draft = AgentDraft.objects.get(agent=agent)
    assert draft.config["memorySettings"]["instructions"] == "" and draft.config["memorySettings"]["quietMinutes"] == 15
    assert agent.versions.count() == 3


# --- Who may see and do what -----------------------------------------------------------------


def test_every_memory_url_is_404_for_another_team_and_changes_nothing(agent, other_team):
    memory = remembered(agent, "u_1", "Prefers email over phone.")
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    consent_set(end_user=memory.end_user, agreed=True, source="api")
    pid, eu = agent.public_id, memory.end_user_id
    client = Client()
    client.force_login(other_team[1])
    gets = [
        reverse("memory:tab", args=[pid]),
        reverse("memory:people", args=[pid]),
        reverse("memory:activity", args=[pid]),
        reverse("memory:apply_confirm", args=[pid]),
        reverse("memory:check", args=[pid]),
        reverse("memory:note", args=[pid]) + "?note_for=u_1",
        reverse("memory:try", args=[pid]),
        reverse("memory:detail", args=[pid, eu]),
        reverse("memory:line_edit", args=[pid, eu, 1]),
        reverse("memory:erase", args=[pid, eu]),
        reverse("memory:transcript", args=[pid, conversation.public_id]),
    ]
    posts = [
        reverse("memory:line_edit", args=[pid, eu, 1]),
        reverse("memory:line_delete", args=[pid, eu, 1]),
        reverse("memory:replace", args=[pid, eu]),
        reverse("memory:stop", args=[pid, eu]),
        reverse("memory:delete", args=[pid, eu]),
        reverse("memory:erase", args=[pid, eu]),
        reverse("memory:apply", args=[pid]),
        reverse("memory:line_add", args=[pid, eu]),
    ]
    for url in gets:
        assert client.get(url).status_code == 404, url
    for url in posts:
        assert (
            client.post(url, {"text": "x", "was": "Prefers email over phone.", "confirm": "u_1"}).status_code == 404
        ), url
    memory.refresh_from_db()
    assert memory.lines == ["Prefers email over phone."] and memory.stopped_at is None
    assert memory.runs.count() == 1


def test_memory_pages_need_sign_in(client, agent):
    for url in (tab(agent), reverse("memory:try", args=[agent.public_id])):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_memory_edits_refuse_posts_without_a_csrf_token(agent, user):
    memory = remembered(agent, "u_1", "Prefers email over phone.")
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post(
        reverse("memory:line_delete", args=[agent.public_id, memory.end_user_id, 1]),
        {"was": "Prefers email over phone."},
    )
    assert response.status_code == 403
    memory.refresh_from_db()
    assert memory.lines == ["Prefers email over phone."]


def test_an_apply_that_has_ended_tells_the_page_to_read_memories_again(member_client, agent, user):
    """The note preview listens for memoryChanged: after Apply it shows the lines as they are."""
    remembered(agent, "u_1", "Works from the Pune office.")
    job = memory_apply.apply_start(agent=agent, user=user)  # inline here: it has ended
    url = reverse("memory:apply_status", args=[agent.public_id, job.pk])
    response = member_client.get(url, HTTP_HX_REQUEST="true")
    assert response["HX-Trigger"] == "memoryChanged"
    page = member_client.get(tab(agent)).content.decode()
    assert 'hx-trigger="change, submit, memoryChanged from:body"' in page


@pytest.mark.parametrize(
    ("words", "code"),
    [("remember if they feel lonely", "emotional_state"), ("keep whether they are pregnant", "health")],
)
def test_the_live_check_reads_sensitive_phrasings_as_the_guards_do(member_client, agent, words, code):
    url = reverse("memory:check", args=[agent.public_id])
    checks = member_client.get(url, {"instructions": words}, HTTP_HX_REQUEST="true").content.decode()
    assert f'data-category="{code}"' in checks and "Ask first is recommended" in checks
    assert 'data-testid="turn-on-ask-first"' in checks
