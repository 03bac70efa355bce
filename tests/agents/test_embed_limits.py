"""Embed limits that cannot be farmed: visitor ids expire unless used (and are renewed in use), a
per-address cap on messages and requests beside the per-visitor and per-agent ones, so one address
cannot take an agent's whole share, and a limit on the config endpoint."""

import json
from datetime import timedelta
from unittest import mock

import pytest
from django.core import signing
from django.core.cache import cache
from django.test import Client

from agents.models import EndUser, Message
from surfaces.embed import services as embed_services
from surfaces.embed.services import VISITOR_ID_MAX_AGE, VISITOR_SALT, visitor_id_issue, visitor_id_verify


@pytest.fixture(autouse=True)
def fresh_rate_counts():
    cache.clear()
    yield
    cache.clear()


def post(client, path, body, ip="203.0.113.1"):
    return client.post(path, data=json.dumps(body), content_type="application/json", REMOTE_ADDR=ip)


def start(client, agent, ip="203.0.113.1", **body):
    return post(client, f"/embed/v1/agents/{agent.public_id}/start", body, ip=ip)


def send(client, chat, text, ip="203.0.113.1"):
    return post(client, f"/embed/v1/conversations/{chat['id']}/messages", {"token": chat["token"], "text": text}, ip=ip)


def issued_at(agent, seconds_ago: float) -> str:
    """A visitor id as if issued that many seconds ago."""
    real = embed_services.time.time()
    with mock.patch("django.core.signing.time.time", return_value=real - seconds_ago):
        return visitor_id_issue(agent)


# --- Expiry and renewal ------------------------------------------------------------------------


def test_a_visitor_id_unused_for_400_days_expires(agent):
    old = issued_at(agent, VISITOR_ID_MAX_AGE.total_seconds() + 60)
    assert visitor_id_verify(agent, old) is None
    data = start(Client(), agent, visitorId=old).json()
    assert data["visitorIdReplaced"] is True and visitor_id_verify(agent, data["visitorId"]) is not None


def test_a_visitor_id_in_use_is_renewed_and_keeps_its_person(agent):
    old = issued_at(agent, timedelta(days=399).total_seconds())
    person = visitor_id_verify(agent, old)
    data = start(Client(), agent, visitorId=old).json()
    assert data["visitorIdReplaced"] is False and data["visitorId"] != old
    assert visitor_id_verify(agent, data["visitorId"]) == person
    assert EndUser.objects.filter(external_id=person).count() == 1
    # The same id used again the same day comes back unchanged.
    again = start(Client(), agent, visitorId=data["visitorId"]).json()
    assert again["visitorId"] == data["visitorId"]


def test_an_id_signed_before_timestamps_is_taken_once_and_renewed(agent):
    legacy = signing.Signer(key=agent.identity_secret, salt=VISITOR_SALT).sign("visitor_legacy123")
    data = start(Client(), agent, visitorId=legacy).json()
    assert data["visitorIdReplaced"] is False and data["visitorId"] != legacy
    assert visitor_id_verify(agent, data["visitorId"]) == "visitor_legacy123"


def test_an_expired_stamped_id_is_not_taken_as_an_old_style_one(agent):
    old = issued_at(agent, VISITOR_ID_MAX_AGE.total_seconds() + 60)
    assert embed_services.visitor_id_check(agent, old) is None


# --- Per-address caps -------------------------------------------------------------------------


def test_one_address_cannot_take_the_agents_message_share(agent, settings):
    """Many farmed visitor ids on one address: the address's cap stops it while the agent still
    has room, and a visitor elsewhere goes on chatting."""
    settings.EMBED_RATE_LIMITS = {"ip_messages": (3, 3600), "agent_messages": (5, 3600), "visitor_messages": (10, 3600)}
    client = Client()
    chats = [start(client, agent).json()["conversation"] for _ in range(4)]
    statuses = [send(client, chat, "hi").status_code for chat in chats]
    assert statuses == [200, 200, 200, 429]
    refused = send(client, chats[0], "again")
    assert refused.status_code == 429 and "from this address" in refused.json()["error"]["message"]
    elsewhere = start(Client(), agent, ip="198.51.100.2").json()["conversation"]
    assert send(Client(), elsewhere, "hello", ip="198.51.100.2").status_code == 200
    assert Message.objects.filter(kind="user").count() == 4


def test_config_is_limited_per_address(agent, settings):
    settings.EMBED_RATE_LIMITS = {"ip_requests": (2, 3600)}
    client = Client()
    path = f"/embed/v1/agents/{agent.public_id}/config"
    assert [client.get(path, REMOTE_ADDR="203.0.113.9").status_code for _ in range(3)] == [200, 200, 429]
    assert client.get(path, REMOTE_ADDR="203.0.113.10").status_code == 200


def test_every_address_cap_is_below_its_agent_wide_cap():
    limits = embed_services.rate_limits()
    assert limits["ip_messages"][0] < limits["agent_messages"][0]
    assert limits["ip_requests"][0] < limits["agent_requests"][0]
    assert limits["ip_new_visitors"][0] <= limits["ip_requests"][0]
