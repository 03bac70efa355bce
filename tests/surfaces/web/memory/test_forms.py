"""The Memory tab's forms (surfaces/web/memory/forms.py): each refuses its invalid input with a
clear error and changes nothing; the settings form shows every refused setting at once, in the
form's words, and keeps what was typed."""

import pytest
from django.test import Client
from django.urls import reverse

from agents import services as agent_services
from agents.models import AgentDraft, EndUser, Plan
from memory.models import Memory, TrialJob
from surfaces.web.memory.forms import MemorySettingsForm, StopForm, TryForm
from tests.conftest import make_team
from tests.fuzz_helpers import fingerprint
from tests.memory.seed import remembered

HTMX = {"HTTP_HX_REQUEST": "true"}
LINES = "Prefers email over phone.\nSpeaks Hindi."
SETTINGS = {"on": "on", "instructions": "", "keepForDays": "90", "quietMinutes": "15", "showSwitch": "on"}


def parsed(form) -> dict:
    assert form.is_valid(), form.errors
    return form.cleaned_data


def url(name, memory, *extra):
    return reverse(f"memory:{name}", args=[memory.agent.public_id, memory.end_user_id, *extra])


def test_every_refused_setting_is_shown_at_once_beside_its_field(member_client, agent):
    before = fingerprint()
    typed = {
        **SETTINGS,
        "instructions": "Keep which office they work from.",
        "keepForDays": "0",
        "quietMinutes": "7",
        "privacyUrl": "javascript:alert(1)",
    }
    response = member_client.post(reverse("memory:tab", args=[agent.public_id]), typed)
    assert response.status_code == 400
    page = response.content.decode().replace("&#x27;", "'")
    for field, words in (
        ("keepForDays", "Keep for: give a whole number of days from 1 to 3650."),
        ("quietMinutes", "Quiet for: choose 5, 15, 30 or 60 minutes."),
        ("privacyUrl", "Privacy policy: give a web address that starts with https:// or http://"),
    ):
        assert f'data-testid="error-{field}">{words}' in page
    # All at once, in a summary that takes focus, each linked to its field; each field says which error is its.
    assert 'data-focus-on-load aria-labelledby="settings-errors-h"' in page
    assert "Not saved: 3 problems to fix. What you typed is kept." in page
    for field, anchor in (("keepForDays", "ms-keep"), ("quietMinutes", "ms-quiet"), ("privacyUrl", "ms-privacy")):
        assert f'<a href="#{anchor}" data-testid="error-link-{field}">' in page
        assert f'id="{anchor}"' in page
    assert 'aria-describedby="keep-help keep-error" aria-invalid="true"' in page
    assert 'aria-describedby="quiet-help quiet-error"' in page
    assert 'aria-describedby="privacy-help privacy-error" aria-invalid="true"' in page
    assert 'data-testid="error-instructions"' not in page and 'data-testid="error-on"' not in page
    # What was typed stays in the form, the refused values included.
    assert 'value="0"' in page and 'value="javascript:alert(1)"' in page
    assert "Keep which office they work from.</textarea>" in page
    assert fingerprint() == before and not AgentDraft.objects.filter(agent=agent).exists()


def test_the_settings_form_parses_and_the_validator_decides():
    assert parsed(MemorySettingsForm({**SETTINGS, "keepForDays": " 45 ", "askFirst": "yes"}, plan_has_memory=True)) == {
        "on": True,
        "instructions": "",
        "keepForDays": 45,
        "quietMinutes": 15,
        "showSwitch": True,
        "askFirst": False,  # only what a ticked box sends is a tick
        "privacyUrl": "",
    }
    refused = MemorySettingsForm({**SETTINGS, "keepForDays": "many", "quietMinutes": ""}, plan_has_memory=True)
    assert not refused.is_valid()
    assert refused.errors_by_field() == {
        "keepForDays": "Keep for: give a whole number of days from 1 to 3650.",
        "quietMinutes": "Quiet for: choose 5, 15, 30 or 60 minutes.",
    }
    assert refused.typed()["keepForDays"] == "many" and refused.typed()["on"] is True


@pytest.mark.parametrize("n", ["0", "21", "five"])
def test_a_try_on_a_number_of_people_it_does_not_take_is_refused_and_starts_nothing(member_client, agent, n):
    response = member_client.post(reverse("memory:try", args=[agent.public_id]), {"n": n, "include_open": "1"})
    assert response.status_code == 400
    assert 'data-testid="try-error">Try runs on 1 to 20 end users.' in response.content.decode()
    assert not TrialJob.objects.exists()


def test_the_try_form_reads_its_size_and_the_open_chats_tick():
    assert parsed(TryForm({})) == {"n": 5, "include_open": False}
    assert parsed(TryForm({"n": " 10 ", "include_open": "1"})) == {"n": 10, "include_open": True}
    assert parsed(TryForm({"n": "10", "include_open": "on"}))["include_open"] is False  # the box sends 1


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_line_to_add_is_refused_and_changes_nothing(member_client, agent, text):
    memory = remembered(agent, "u_1", LINES)
    before = fingerprint()
    page = member_client.post(url("line_add", memory), {"text": text}, **HTMX).content.decode()
    assert "Not saved: Write the line to add first." in page
    assert fingerprint() == before


def test_a_line_edit_or_delete_of_a_line_the_page_did_not_show_is_refused(member_client, agent):
    memory = remembered(agent, "u_1", LINES)
    before = fingerprint()
    for name, fields in (
        ("line_edit", {"text": "Prefers phone.", "was": "Prefers post."}),
        ("line_delete", {"was": "Prefers post."}),
    ):
        page = member_client.post(url(name, memory, 1), fields, **HTMX).content.decode()
        assert "This memory changed since you opened it." in page, name
    assert fingerprint() == before


def test_a_replace_made_on_a_stale_page_is_refused(member_client, agent):
    memory = remembered(agent, "u_1", LINES)
    page = member_client.get(url("detail", memory)).content.decode()
    version = page.split('name="version" value="')[1].split('"')[0]
    remembered(agent, "u_1", "Speaks Hindi.")
    before = fingerprint()
    page = member_client.post(url("replace", memory), {"text": "Prefers phone.", "version": version}, **HTMX)
    assert "This memory changed since you opened it." in page.content.decode()
    assert fingerprint() == before


def test_stop_is_what_the_page_sends_and_only_0_resumes():
    assert parsed(StopForm({})) == {"stop": True}
    assert parsed(StopForm({"stop": "1"})) == {"stop": True}
    assert parsed(StopForm({"stop": "0"})) == {"stop": False}


@pytest.mark.parametrize("confirm", ["", "u_2", " u_1", "U_1"])
def test_an_erase_not_confirmed_with_the_exact_id_is_refused_and_erases_nothing(member_client, agent, confirm):
    memory = remembered(agent, "u_1", LINES)
    before = fingerprint()
    response = member_client.post(url("erase", memory), {"confirm": confirm}, follow=True)
    assert "Type the end-user id exactly to confirm. Nothing was erased." in response.content.decode()
    assert EndUser.objects.filter(pk=memory.end_user_id).exists() and Memory.objects.filter(pk=memory.pk).exists()
    assert fingerprint() == before


def test_on_a_plan_without_memory_the_plan_is_one_of_the_errors_shown_at_once(db):
    team, owner = make_team("smallco", plan=Plan.FREE)
    agent = agent_services.agent_create(team=team, name="Helper")
    client = Client()
    client.force_login(owner)
    response = client.post(reverse("memory:tab", args=[agent.public_id]), {**SETTINGS, "keepForDays": "0"})
    page = response.content.decode().replace("&#x27;", "'")
    assert response.status_code == 400 and "Not saved: 2 problems to fix." in page
    assert '<a href="#ms-on" data-testid="error-link-on">Memory comes with the Team plan and up.' in page
    assert '<a href="#ms-keep" data-testid="error-link-keepForDays">Keep for:' in page
    assert not AgentDraft.objects.filter(agent=agent).exists()


def test_a_builder_refusal_about_a_setting_links_to_its_field(member_client, agent):
    response = member_client.post(
        reverse("agents:builder", args=[agent.public_id]), {"message": "forget about quiet minutes"}, **HTMX
    )
    page = response.content.decode().replace("&#x27;", "'").replace("&ldquo;", "\u201c").replace("&rdquo;", "\u201d")
    assert "is a setting, not something for memory to keep or leave out" in page
    link = reverse("memory:tab", args=[agent.public_id]) + "#field-quietMinutes"
    assert f'<a href="{link}" data-testid="builder-field-link">Change Quiet for on the form</a>' in page
    assert not AgentDraft.objects.filter(agent=agent).exists()
