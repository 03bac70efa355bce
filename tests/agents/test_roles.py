"""Team roles (issue 23): owners and admins manage access (API keys, webhook endpoints, members and
roles), members build agents and edit memories. Every refusal on the web is the 403 page, from the
view, and changes nothing; removing a member signs them out and revokes the keys they made; the
audit log records each action, on the Team page and over the API."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client
from django.urls import reverse

from agents import services as agent_services
from agents.models import ApiKey, AuditEvent, Invitation, Membership
from tests.api_helpers import InProcessApi
from tests.conftest import make_team
from webhooks.models import Endpoint
from webhooks.services import endpoint_create

User = get_user_model()
pytestmark = pytest.mark.django_db


def person(team, role: str, name: str | None = None):
    name = name or role
    user = User.objects.create_user(username=f"{name}@acme.test", email=f"{name}@acme.test", password="x" * 12)
    membership = Membership.objects.create(team=team, user=user, role=role)
    client = Client()
    client.force_login(user)
    return user, membership, client


@pytest.fixture
def world(team, user, agent):
    """The owner (`user`) with a key and a webhook endpoint, a member and an admin, and an open invitation."""
    key, _ = agent_services.api_key_create(team=team, name="Production", created_by=user)
    endpoint = endpoint_create(team=team, url="https://example.com/hook", events=["memory.updated"])
    Endpoint.objects.filter(pk=endpoint.pk).update(active=False)
    invitation = Invitation.objects.create(
        team=team, email="new@example.com", token_hash="0" * 64, created_at=key.created_at, expires_at=key.created_at
    )
    member = person(team, "member")
    admin = person(team, "admin")
    owner_membership = Membership.objects.get(team=team, user=user)
    return {
        "team": team,
        "key": key,
        "endpoint": endpoint,
        "invitation": invitation,
        "member": member,
        "admin": admin,
        "owner": owner_membership,
    }


def state():
    return {
        "keys": sorted(ApiKey.objects.values_list("pk", "revoked_at")),
        "endpoints": sorted(Endpoint.objects.values_list("pk", "active", "url")),
        "members": sorted(Membership.objects.values_list("pk", "role")),
        "invitations": sorted(Invitation.objects.values_list("pk", "revoked_at")),
        "audit": AuditEvent.objects.count(),
    }


# (name, method, url from the world, form data): every admin-only operation of the web app.
WEB_ADMIN_ONLY = [
    ("create a key", "post", lambda w: reverse("agents:api_keys"), {"name": "Mine"}),
    ("revoke a key", "post", lambda w: reverse("agents:api_key_revoke", args=[w["key"].pk]), {}),
    (
        "add a webhook",
        "post",
        lambda w: reverse("webhooks:webhooks"),
        {"url": "https://example.com/x", "events": ["memory.updated"]},
    ),
    ("pause a webhook", "post", lambda w: reverse("webhooks:webhook_toggle", args=[w["endpoint"].public_id]), {}),
    ("remove a webhook", "post", lambda w: reverse("webhooks:webhook_delete", args=[w["endpoint"].public_id]), {}),
    ("invite", "post", lambda w: reverse("agents:team"), {"email": "x@example.com"}),
    ("remove a member", "post", lambda w: reverse("agents:member_remove", args=[w["admin"][1].pk]), {}),
    ("change a role", "post", lambda w: reverse("agents:member_role", args=[w["admin"][1].pk]), {"role": "member"}),
    ("withdraw an invitation", "post", lambda w: reverse("agents:invitation_revoke", args=[w["invitation"].pk]), {}),
    ("read the audit log", "get", lambda w: reverse("agents:audit_log"), {}),
]


@pytest.mark.parametrize("name, method, url, data", WEB_ADMIN_ONLY, ids=[row[0] for row in WEB_ADMIN_ONLY])
def test_a_member_is_refused_every_admin_only_page_action_with_a_403_page(world, mailoutbox, name, method, url, data):
    _, _, client = world["member"]
    before = state()
    response = getattr(client, method)(url(world), data)
    assert response.status_code == 403
    page = response.content.decode()
    assert 'data-testid="forbidden"' in page and "Only a team owner or admin can" in page
    assert "Your role in this team is member." in page
    assert state() == before and mailoutbox == []


def test_the_pages_show_a_member_no_admin_controls_but_the_lists(world):
    _, _, client = world["member"]
    keys = client.get(reverse("agents:api_keys")).content.decode()
    assert "Create key" not in keys and ">Revoke<" not in keys and "Production" in keys
    hooks = client.get(reverse("webhooks:webhooks")).content.decode()
    assert "Add endpoint" not in hooks and "example.com/hook" in hooks
    team_page = client.get(reverse("agents:team")).content.decode()
    assert 'data-testid="invite"' not in team_page and 'data-testid="remove-member"' not in team_page
    assert 'data-testid="audit"' not in team_page


def test_an_admin_manages_keys_webhooks_and_members_but_not_owners(world, mailoutbox):
    admin_user, _, client = world["admin"]
    assert client.post(reverse("agents:api_keys"), {"name": "Admin's"}).status_code == 200
    made = ApiKey.objects.get(name="Admin's")
    assert made.created_by == admin_user
    assert client.post(reverse("agents:api_key_revoke", args=[world["key"].pk])).status_code == 302
    assert ApiKey.objects.get(pk=world["key"].pk).revoked_at is not None
    assert client.post(reverse("agents:team"), {"email": "dev@example.com"}).status_code == 302
    assert len(mailoutbox) == 1
    member_membership = world["member"][1]
    client.post(reverse("agents:member_role", args=[member_membership.pk]), {"role": "admin"})
    assert Membership.objects.get(pk=member_membership.pk).role == "admin"
    # An owner is beyond an admin: neither made, changed nor removed by one.
    for url, data in (
        (reverse("agents:member_role", args=[member_membership.pk]), {"role": "owner"}),
        (reverse("agents:member_role", args=[world["owner"].pk]), {"role": "member"}),
        (reverse("agents:member_remove", args=[world["owner"].pk]), {}),
    ):
        response = client.post(url, data)
        assert response.status_code == 403 and "Only a team owner can" in response.content.decode()
    assert Membership.objects.get(pk=world["owner"].pk).role == "owner"
    assert Membership.objects.get(pk=member_membership.pk).role == "admin"


def test_the_owner_makes_an_owner_and_the_last_owner_stays(world, member_client):
    member_membership = world["member"][1]
    member_client.post(reverse("agents:member_role", args=[member_membership.pk]), {"role": "owner"})
    assert Membership.objects.get(pk=member_membership.pk).role == "owner"
    member_client.post(reverse("agents:member_role", args=[member_membership.pk]), {"role": "member"})
    response = member_client.post(
        reverse("agents:member_role", args=[world["owner"].pk]), {"role": "member"}, follow=True
    )
    assert "keeps at least one owner" in response.content.decode()
    assert Membership.objects.get(pk=world["owner"].pk).role == "owner"
    bad = member_client.post(reverse("agents:member_role", args=[member_membership.pk]), {"role": "god"}, follow=True)
    assert "A role is one of" in bad.content.decode()


def test_removing_a_member_signs_them_out_and_revokes_the_keys_they_made_and_says_so(world, member_client):
    admin_user, admin_membership, admin_client = world["admin"]
    admin_client.get(reverse("agents:api_keys"))  # a live session
    _, raw = agent_services.api_key_create(team=world["team"], name="Admin's", created_by=admin_user)
    api = InProcessApi(raw)
    assert api.get("/agents").status == 200
    page = member_client.get(reverse("agents:team")).content.decode()
    assert "They are signed out everywhere at once, and the 1 API key they made is revoked." in page
    sessions_before = Session.objects.count()
    response = member_client.post(reverse("agents:member_remove", args=[admin_membership.pk]), follow=True)
    assert "signed out everywhere, and 1 API key they made revoked" in response.content.decode()
    assert not Membership.objects.filter(pk=admin_membership.pk).exists()
    assert ApiKey.objects.get(name="Admin's").revoked_at is not None
    assert (api.get("/agents").status, api.get("/agents").code) == (401, "invalid_api_key")
    assert Session.objects.count() == sessions_before - 1
    assert admin_client.get(reverse("agents:api_keys")).status_code == 302  # to the sign-in page
    event = AuditEvent.objects.get(action="member.removed")
    assert event.target == "admin@acme.test" and event.detail == {"keysRevoked": 1, "sessionsEnded": 1}


def test_a_key_acts_with_its_makers_role_now(world, django_capture_on_commit_callbacks):
    admin_user, admin_membership, _ = world["admin"]
    _, raw = agent_services.api_key_create(team=world["team"], name="Admin's", created_by=admin_user)
    api = InProcessApi(raw)
    assert api.get("/audit-log").status == 200
    with django_capture_on_commit_callbacks(execute=True):  # the key generation moves on commit
        admin_membership.role = "member"
        admin_membership.save()
    refused = api.get("/audit-log")
    assert (refused.status, refused.code) == (403, "admin_only")


def test_the_keys_page_names_each_keys_maker_and_last_use(world, member_client):
    _, raw = agent_services.api_key_create(team=world["team"], name="CLI")
    InProcessApi(raw).get("/agents")
    page = member_client.get(reverse("agents:api_keys")).content.decode()
    assert 'data-testid="key-maker">owner@acme.test<' in page
    assert "command line" in page
    assert page.count('data-testid="key-last-used">never<') == 1  # the owner's key; the CLI key was used


def test_a_key_name_over_its_column_is_refused_with_400(world, member_client):
    response = member_client.post(reverse("agents:api_keys"), {"name": "k" * 81})
    assert response.status_code == 400 and "at most 80 characters" in response.content.decode()
    assert not ApiKey.objects.filter(name__startswith="kkk").exists()


def test_the_audit_log_records_who_did_what_and_when_on_the_page_and_over_the_api(world, member_client, mailoutbox):
    team = world["team"]
    member_client.post(reverse("agents:api_keys"), {"name": "Staging"})
    member_client.post(reverse("agents:api_key_revoke", args=[world["key"].pk]))
    member_client.post(reverse("agents:team"), {"email": "dev@example.com"})
    member_client.post(reverse("agents:member_role", args=[world["member"][1].pk]), {"role": "admin"})
    member_client.post(reverse("webhooks:webhook_toggle", args=[world["endpoint"].public_id]))
    _, raw = agent_services.api_key_create(team=team, name="ops")
    api = InProcessApi(raw)
    assert api.delete(f"/webhooks/{world['endpoint'].public_id}").status == 204
    actions = list(AuditEvent.objects.order_by("created_at", "id").values_list("action", "actor_label"))
    assert actions == [
        ("api_key.created", "owner@acme.test"),
        ("api_key.revoked", "owner@acme.test"),
        ("member.invited", "owner@acme.test"),
        ("member.role_changed", "owner@acme.test"),
        ("webhook.updated", "owner@acme.test"),
        ("webhook.deleted", "command line"),
    ]
    page = member_client.get(reverse("agents:team")).content.decode()
    assert page.count('data-testid="audit-row"') == 6 and "(member → admin)" in page
    # Over the API: newest first, keyset pages.
    first = api.get("/audit-log?limit=4")
    assert first.status == 200 and [e["action"] for e in first.body["events"]][:2] == [
        "webhook.deleted",
        "webhook.updated",
    ]
    assert first.body["events"][0]["apiKeyPrefix"] == raw[:12]
    rest = api.get(f"/audit-log?limit=4&cursor={first.body['next']['cursor']}")
    assert [e["action"] for e in rest.body["events"]] == ["api_key.revoked", "api_key.created"]
    assert rest.body["next"] is None
    # Another team's log is its own.
    other, _ = make_team("globex")
    _, other_raw = agent_services.api_key_create(team=other, name="x")
    assert InProcessApi(other_raw).get("/audit-log").body["events"] == []


def test_the_audit_page_pages_and_refuses_a_forged_cursor(world, member_client, monkeypatch):
    from surfaces.web import team as team_views

    monkeypatch.setattr(team_views, "AUDIT_PAGE_SIZE", 2)
    for n in range(3):
        member_client.post(reverse("agents:api_keys"), {"name": f"k{n}"})
    first = member_client.get(reverse("agents:audit_log")).content.decode()
    assert first.count('data-testid="audit-row"') == 2 and 'data-testid="audit-older"' in first
    assert member_client.get(reverse("agents:audit_log") + "?cursor=nope").status_code == 400


def test_the_migration_gives_a_team_without_an_owner_its_first_member(db):
    import importlib

    from django.apps import apps

    team, owner = make_team("initech")
    later = User.objects.create_user(username="later@initech.test", email="later@initech.test")
    Membership.objects.create(team=team, user=later)
    Membership.objects.filter(team=team).update(role="member")
    importlib.import_module("agents.migrations.0005_roles_audit").every_team_has_an_owner(apps, None)
    assert dict(Membership.objects.filter(team=team).values_list("user__email", "role")) == {
        "owner@initech.test": "owner",
        "later@initech.test": "member",
    }


def test_deleting_an_account_revokes_its_keys_so_none_passes_for_a_command_line_key(
    world, django_capture_on_commit_callbacks
):
    admin_user, _, _ = world["admin"]
    _, raw = agent_services.api_key_create(team=world["team"], name="Admin's", created_by=admin_user)
    assert InProcessApi(raw).get("/audit-log").status == 200
    with django_capture_on_commit_callbacks(execute=True):  # the key generation moves on commit
        admin_user.delete()
    key = ApiKey.objects.get(name="Admin's")
    assert key.created_by is None and key.revoked_at is not None
    assert InProcessApi(raw).get("/agents").status == 401
