"""The web app's forms (surfaces/web/forms.py): each refuses its invalid input with a clear error
and changes nothing; the draft form shows every refusal at once; "next" never leaves the agent."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from agents import access
from agents import team as team_services
from agents.models import Agent, AgentDraft, ApiKey, AuditEvent, Invitation, Membership
from tests.conftest import make_team
from tests.fuzz_helpers import fingerprint

User = get_user_model()


def test_switching_to_a_team_one_is_not_in_changes_nothing(member_client, user, other_team):
    mine, _ = make_team("initech")
    Membership.objects.create(team=mine, user=user)
    member_client.post(reverse("agents:switch_team"), {"team": str(mine.pk)})
    assert member_client.session["team_id"] == mine.pk
    for wanted in (str(other_team[0].pk), "", "nine", f" {mine.pk}x"):
        response = member_client.post(reverse("agents:switch_team"), {"team": wanted})
        assert response.status_code == 302 and response["Location"] == reverse("agents:home")
        assert member_client.session["team_id"] == mine.pk


@pytest.mark.parametrize("name", ["", "   ", "n" * 121])
def test_a_new_agent_without_a_usable_name_is_refused_and_none_is_made(member_client, team, name):
    response = member_client.post(reverse("agents:new"), {"name": name})
    assert response.status_code == 400
    assert "An agent needs a name of at most 120 characters." in response.content.decode()
    assert not Agent.objects.filter(team=team).exists()


def test_the_draft_form_shows_every_refusal_at_once_and_saves_nothing(member_client, agent):
    before = fingerprint()
    response = member_client.post(
        reverse("agents:overview", args=[agent.public_id]),
        {"instructions": "x" * 8001, "guardrails": "Never promise refunds.", "actions": "Renew Plan = Renewed"},
    )
    page = response.content.decode()
    flash = page.split('class="flash flash-error" role="alert">')[1].split("</div>")[0]
    assert "instructions is too long: at most 8000 characters." in flash
    assert "An action name is lower-case letters, digits and underscores, e.g. renew_plan." in flash
    assert "guardrails" not in flash
    assert fingerprint() == before and not AgentDraft.objects.filter(agent=agent).exists()


def test_the_draft_form_reads_one_action_a_line(member_client, agent):
    member_client.post(
        reverse("agents:overview", args=[agent.public_id]),
        {"instructions": "Be brief.", "guardrails": "", "actions": "renew_plan = Renewed the plan\n\n  refund =  \n"},
    )
    assert AgentDraft.objects.get(agent=agent).config["actions"] == [
        {"name": "renew_plan", "label": "Renewed the plan"},
        {"name": "refund", "label": "Refund"},
    ]


@pytest.mark.parametrize("url_name", ["agents:publish", "agents:discard"])
def test_next_goes_back_only_to_the_agents_own_pages(member_client, agent, url_name):
    home = f"/agents/{agent.public_id}/"
    for wanted, landed in (
        (f"{home}memory/", f"{home}memory/"),
        ("https://evil.test/", home),
        (f"https://evil.test{home}", home),
        (f"{home}..//evil.test/", home),
        ("/agents/other/", home),
        ("", home),
    ):
        response = member_client.post(reverse(url_name, args=[agent.public_id]), {"next": wanted})
        assert response.status_code == 302 and response["Location"] == landed, wanted


def test_a_builder_message_over_its_limit_is_refused_in_the_panel_and_changes_nothing(member_client, agent):
    before = fingerprint()
    response = member_client.post(
        reverse("agents:builder", args=[agent.public_id]),
        {"message": "turn on memory " * 200, "next": "https://evil.test/"},
    )
    assert response.status_code == 302 and response["Location"] == f"/agents/{agent.public_id}/"
    log = member_client.session["builder_log"][agent.public_id]
    assert log[-1]["error"] and log[-1]["reply"] == "A Builder message is at most 2000 characters."
    assert len(log[-1]["you"]) == 2000
    assert fingerprint() == before


def test_a_key_name_over_80_characters_is_refused_and_no_key_is_made(member_client, team):
    response = member_client.post(reverse("agents:api_keys"), {"name": "k" * 81})
    assert response.status_code == 400
    assert "A key&#x27;s name is at most 80 characters." in response.content.decode()
    assert not ApiKey.objects.filter(team=team).exists()
    # Spaces around a name are not part of it, and do not count towards its length.
    member_client.post(reverse("agents:api_keys"), {"name": "  " + "k" * 80 + "  "})
    assert ApiKey.objects.get(team=team).name == "k" * 80


def test_an_invitation_to_something_that_is_not_an_address_is_refused(member_client, team, mailoutbox):
    response = member_client.post(reverse("agents:team"), {"email": "priya at example"})
    assert response.status_code == 400
    page = response.content.decode()
    assert 'data-testid="invite-error">Give the teammate&#x27;s e-mail address' in page
    assert 'value="priya at example"' in page
    assert not Invitation.objects.filter(team=team).exists() and mailoutbox == []


@pytest.mark.parametrize("role", ["", "superuser", "Owner", "admin "])
def test_a_role_that_is_not_one_of_the_roles_is_refused_and_changes_nothing(member_client, team, role):
    bob = User.objects.create_user(username="bob@acme.test", email="bob@acme.test", password="x" * 12)
    membership = Membership.objects.create(team=team, user=bob)
    response = member_client.post(reverse("agents:member_role", args=[membership.pk]), {"role": role}, follow=True)
    assert "A role is one of: owner, admin, member." in response.content.decode()
    membership.refresh_from_db()
    assert membership.role == "member"
    assert not AuditEvent.objects.filter(team=team, action=AuditEvent.Action.ROLE_CHANGED).exists()


def test_a_short_password_on_the_invitation_link_is_refused_and_makes_no_account(team, user, mailoutbox):
    tokens = []
    team_services.invitation_create(
        team=team,
        email="priya@example.com",
        actor=access.actor_for_user(team, user),
        link_for=lambda token: tokens.append(token) or f"https://testserver/invitations/{token}/",
    )
    path = reverse("agents:invitation", args=[tokens[0]])
    response = Client().post(path, {"password": "short"})
    assert response.status_code == 400
    assert "Choose a password of at least 10 characters." in response.content.decode()
    assert not User.objects.filter(email="priya@example.com").exists()
    assert Invitation.objects.get(team=team).accepted_at is None
