"""The team (issue 15): an owner invites a teammate by e-mail with a one-use link, sees the
members and removes one; the invited person joins with a new password or as themselves."""

import re
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from agents.models import Invitation, Membership
from tests.conftest import make_team

User = get_user_model()


def invite(client, email):
    return client.post(reverse("agents:team"), {"email": email})


def link_in(mail) -> str:
    return re.search(r"https?://\S+/invitations/\S+/", mail.body).group(0)


def test_an_owner_invites_by_email_and_the_link_makes_a_member(member_client, team, agent, mailoutbox):
    response = invite(member_client, "Priya@Example.com")
    assert response.status_code == 302
    assert len(mailoutbox) == 1 and mailoutbox[0].to == ["priya@example.com"]
    link = link_in(mailoutbox[0])
    token = link.rstrip("/").rsplit("/", 1)[1]
    assert not Invitation.objects.filter(token_hash__contains=token).exists()  # only a hash is stored
    page = member_client.get(reverse("agents:team")).content.decode()
    assert "priya@example.com" in page and 'data-testid="invitations"' in page

    newcomer = Client()
    path = link.split("testserver", 1)[1]
    assert "Join Acme" in newcomer.get(path).content.decode()
    assert newcomer.post(path, {"password": "short"}).status_code == 400
    response = newcomer.post(path, {"password": "a-long-password-1"})
    assert response.status_code == 302
    priya = User.objects.get(email="priya@example.com")
    assert Membership.objects.get(team=team, user=priya).role == "member"
    # Signed in, and the team's agent is theirs to build.
    assert newcomer.get(reverse("agents:overview", args=[agent.public_id])).status_code == 200
    # The link works once.
    again = Client().get(path)
    assert again.status_code == 404 and "This link does not work" in again.content.decode()


def test_a_signed_in_user_joins_as_themselves(member_client, team, mailoutbox):
    other_team, other_owner = make_team("globex")
    invite(member_client, other_owner.email)
    path = link_in(mailoutbox[0]).split("testserver", 1)[1]
    client = Client()
    client.force_login(other_owner)
    assert client.post(path).status_code == 302
    assert Membership.objects.filter(team=team, user=other_owner).exists()


def test_an_existing_account_must_sign_in_first(member_client, team, mailoutbox):
    _, other_owner = make_team("globex")
    invite(member_client, other_owner.email)
    path = link_in(mailoutbox[0]).split("testserver", 1)[1]
    page = Client().post(path, {"password": "a-long-password-1"}).content.decode()
    assert "sign in, then open the link again" in page
    assert not Membership.objects.filter(team=team, user=other_owner).exists()


def test_expired_and_withdrawn_links_do_not_work(member_client, team, mailoutbox):
    invite(member_client, "a@example.com")
    invite(member_client, "b@example.com")
    expired, withdrawn = [link_in(m).split("testserver", 1)[1] for m in mailoutbox]
    Invitation.objects.filter(email="a@example.com").update(expires_at=timezone.now() - timedelta(seconds=1))
    member_client.post(reverse("agents:invitation_revoke", args=[Invitation.objects.get(email="b@example.com").pk]))
    for path in (expired, withdrawn):
        assert Client().post(path, {"password": "a-long-password-1"}).status_code == 404
    assert not User.objects.filter(email__in=["a@example.com", "b@example.com"]).exists()


def test_bad_addresses_and_members_are_refused_in_plain_words(member_client, user, mailoutbox):
    page = invite(member_client, "not an address").content.decode()
    assert "Give the teammate&#x27;s e-mail address" in page and 'value="not an address"' in page
    assert "already in Acme" in invite(member_client, user.email).content.decode()
    assert mailoutbox == []


def test_the_owner_removes_a_member_but_never_the_last_owner(member_client, team, user):
    bob = User.objects.create_user(username="bob@acme.test", email="bob@acme.test", password="x" * 12)
    bob_membership = Membership.objects.create(team=team, user=bob)
    page = member_client.get(reverse("agents:team")).content.decode()
    assert page.count('data-testid="member-row"') == 2 and "bob@acme.test" in page
    member_client.post(reverse("agents:member_remove", args=[bob_membership.pk]))
    assert not Membership.objects.filter(pk=bob_membership.pk).exists()
    owner = Membership.objects.get(team=team, user=user)
    response = member_client.post(reverse("agents:member_remove", args=[owner.pk]), follow=True)
    assert "keeps at least one owner" in response.content.decode()
    assert Membership.objects.filter(pk=owner.pk).exists()


def test_a_member_cannot_invite_or_remove(team, user, mailoutbox):
    bob = User.objects.create_user(username="bob@acme.test", email="bob@acme.test", password="x" * 12)
    Membership.objects.create(team=team, user=bob)
    client = Client()
    client.force_login(bob)
    page = client.get(reverse("agents:team")).content.decode()
    assert "Only a team owner or admin can invite or remove members" in page and 'data-testid="invite"' not in page
    refused = client.post(reverse("agents:team"), {"email": "x@example.com"})
    assert refused.status_code == 403 and "Only a team owner or admin can invite" in refused.content.decode()
    owner = Membership.objects.get(team=team, user=user)
    assert client.post(reverse("agents:member_remove", args=[owner.pk])).status_code == 403
    assert Membership.objects.filter(pk=owner.pk).exists() and mailoutbox == []


def test_an_invitation_address_over_254_characters_is_refused_in_plain_words(member_client, mailoutbox):
    long_address = "a" * 250 + "@example.com"
    response = invite(member_client, long_address)
    assert response.status_code == 400
    assert "at most 254 characters" in response.content.decode()
    assert not Invitation.objects.exists() and mailoutbox == []


def test_team_urls_are_scoped_to_the_users_team(member_client, mailoutbox):
    other, other_owner = make_team("globex")
    theirs = Membership.objects.get(team=other, user=other_owner)
    assert member_client.post(reverse("agents:member_remove", args=[theirs.pk])).status_code == 404
    assert Membership.objects.filter(pk=theirs.pk).exists()
