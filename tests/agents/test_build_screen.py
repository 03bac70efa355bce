"""The team members' web app: sign-in, team scoping on every Build-screen URL, CSRF, drafts."""

from django.test import Client
from django.urls import reverse

from agents import services
from agents.models import AgentDraft, ApiKey, Membership
from tests.conftest import make_team


def build_urls(agent):
    pid = agent.public_id
    return {
        "get": [
            reverse("agents:overview", args=[pid]),
            reverse("memory:tab", args=[pid]),
            reverse("agents:versions", args=[pid]),
        ],
        "post": [
            reverse("agents:overview", args=[pid]),
            reverse("memory:tab", args=[pid]),
            reverse("agents:publish", args=[pid]),
            reverse("agents:discard", args=[pid]),
            reverse("agents:restore", args=[pid, 1]),
        ],
    }


def test_pages_need_sign_in(client, agent):
    for url in build_urls(agent)["get"]:
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_member_of_another_team_gets_404_on_every_build_screen_url(agent, other_team):
    _, outsider = other_team
    client = Client()
    client.force_login(outsider)
    services.agent_draft_update(agent=agent, changes={"guardrails": "x"})
    urls = build_urls(agent)
    for url in urls["get"]:
        assert client.get(url).status_code == 404, url
    for url in urls["post"]:
        assert client.post(url, {"on": "on", "quietMinutes": "5", "keepForDays": "9"}).status_code == 404, url
    # Nothing changed: the draft is still there and unpublished.
    assert AgentDraft.objects.filter(agent=agent).exists()
    assert agent.versions.count() == 1


def test_an_unknown_agent_is_the_same_404(member_client):
    assert member_client.get(reverse("agents:overview", args=["agt_000000000000"])).status_code == 404


def test_forms_refuse_posts_without_a_csrf_token(agent, user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post(reverse("agents:publish", args=[agent.public_id]))
    assert response.status_code == 403


def test_memory_settings_form_saves_to_the_draft_and_publish_makes_a_version(member_client, agent):
    url = reverse("memory:tab", args=[agent.public_id])
    response = member_client.post(
        url,
        {
            "on": "on",
            "instructions": "Keep which office they work from.",
            "keepForDays": "90",
            "quietMinutes": "5",
            "showSwitch": "on",
        },
    )
    assert response.status_code == 302
    page = member_client.get(url).content.decode()
    assert "unpublished change" in page and "quiet minutes 15 -&gt; 5" in page
    assert agent.versions.count() == 1
    member_client.post(reverse("agents:publish", args=[agent.public_id]), {"next": url})
    assert agent.versions.count() == 2
    assert agent.versions.first().config["memorySettings"]["instructions"] == "Keep which office they work from."


def test_memory_settings_form_shows_the_reason_for_an_invalid_value_and_saves_nothing(member_client, agent):
    url = reverse("memory:tab", args=[agent.public_id])
    response = member_client.post(url, {"on": "on", "keepForDays": "0", "quietMinutes": "15"})
    assert response.status_code == 400
    assert "Keep for: give a whole number of days from 1 to 3650." in response.content.decode()
    assert not AgentDraft.objects.filter(agent=agent).exists()


def test_versions_tab_shows_a_readable_diff(member_client, agent):
    services.agent_update(
        agent=agent, changes={"memorySettings": {"quietMinutes": 60, "instructions": "Keep their office."}}
    )
    page = member_client.get(reverse("agents:versions", args=[agent.public_id]) + "?a=1&b=2").content.decode()
    assert "quiet minutes 15 -&gt; 60" in page
    assert "+ Keep their office." in page


def test_api_keys_are_shown_once_and_stored_hashed(member_client, team):
    response = member_client.post(reverse("agents:api_keys"), {"name": "Production"})
    page = response.content.decode()
    key = ApiKey.objects.get(team=team)
    raw = page.split('data-testid="new-key">')[1].split("<")[0]
    assert raw.startswith("ank_") and raw.startswith(key.prefix)
    assert key.hashed_key == services.hash_api_key(raw) and raw not in key.hashed_key
    assert raw not in member_client.get(reverse("agents:api_keys")).content.decode()


def test_a_team_member_cannot_revoke_another_teams_key(agent, other_team, team):
    key, _ = services.api_key_create(team=team, name="k")
    client = Client()
    client.force_login(other_team[1])
    assert client.post(reverse("agents:api_key_revoke", args=[key.pk])).status_code == 404
    key.refresh_from_db()
    assert key.revoked_at is None


def test_the_embed_snippet_is_absolute_with_a_copy_button(member_client, agent):
    page = member_client.get(reverse("agents:overview", args=[agent.public_id])).content.decode()
    snippet = page.split('data-testid="embed-snippet">')[1].split("</pre>")[0]
    assert 'src="http://testserver/embed/v1.js"' in snippet.replace("&lt;", "<").replace("&gt;", ">").replace(
        "&quot;", '"'
    )
    assert 'data-copy="embed-snippet"' in page


def test_pages_have_a_favicon_and_a_skip_link(member_client, agent):
    page = member_client.get(reverse("memory:tab", args=[agent.public_id])).content.decode()
    assert 'rel="icon"' in page and 'href="#content"' in page and 'id="content"' in page


def test_a_member_of_two_teams_switches_from_any_page(member_client, user, agent):
    """The team switcher is on every signed-in page once someone belongs to more than one team."""
    other, _ = make_team("globex")
    Membership.objects.create(team=other, user=user, role=Membership.Role.MEMBER)
    second = services.agent_create(team=other, name="Sales")
    for name, args in (
        ("agents:overview", [agent.public_id]),
        ("memory:people", [agent.public_id]),
        ("agents:team", []),
    ):
        page = member_client.get(reverse(name, args=args)).content.decode()
        assert 'data-testid="team-switcher"' in page, name
        assert f'<option value="{other.pk}">Globex</option>' in page
    response = member_client.post(reverse("agents:switch_team"), {"team": other.pk})
    assert response.status_code == 302
    page = member_client.get(reverse("agents:home"), follow=True).content.decode()
    assert "Team: <strong>Globex</strong>" in page and second.name in page
    # Not one of theirs: nothing changes.
    stranger, _ = make_team("initech")
    member_client.post(reverse("agents:switch_team"), {"team": stranger.pk})
    assert "Team: <strong>Globex</strong>" in member_client.get(reverse("agents:team")).content.decode()


def test_one_team_shows_no_switcher(member_client, agent):
    assert 'data-testid="team-switcher"' not in member_client.get(reverse("agents:team")).content.decode()
