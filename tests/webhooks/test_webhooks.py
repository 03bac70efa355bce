"""Webhooks: endpoints through the API and the web page, deliveries received by a real HTTP server
on 127.0.0.1 that verifies each signature, retries with exponential backoff, the replay window."""

import json
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from agents import services as agent_services
from memory.store import services as memory_services
from webhooks import sending, services, signing
from webhooks.models import Delivery, Endpoint

pytestmark = pytest.mark.django_db


class Receiver:
    """A local endpoint: records each request; answers the queued statuses, then 200."""

    def __init__(self):
        self.requests = []
        self.statuses = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.requests.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                self.send_response(outer.statuses.pop(0) if outer.statuses else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def events(self, secret):
        out = []
        for request in self.requests:
            assert signing.verify(secret, request["body"], request["headers"][signing.HEADER.lower()])
            out.append(json.loads(request["body"]))
        return out


@pytest.fixture
def receiver(settings):
    settings.WEBHOOKS_ALLOW_HTTP = True
    settings.WEBHOOKS_ALLOW_PRIVATE = True
    server = Receiver()
    yield server
    server.stop()


@pytest.fixture
def key(team):
    return agent_services.api_key_create(team=team, name="tests")[1]


def call(method, path, key, data=None):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return getattr(client, method)(f"/api/v1{path}", data=data, format="json")


# --- Endpoints ----------------------------------------------------------------------------


def test_register_list_read_change_and_remove_an_endpoint(team, agent, key, receiver, other_team):
    made = call("post", "/webhooks", key, {"url": receiver.url, "events": ["end_user.erased", "memory.updated"]})
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["secret"].startswith("whsec_") and body["includeText"] is False and body["agentId"] is None
    assert body["events"] == ["memory.updated", "end_user.erased"]  # in the documented order
    listed = call("get", "/webhooks", key).json()["webhooks"]
    assert [w["id"] for w in listed] == [body["id"]] and "secret" not in listed[0]
    assert call("get", f"/webhooks/{body['id']}", key).json()["deliveries"] == []
    changed = call("patch", f"/webhooks/{body['id']}", key, {"active": False}).json()
    assert changed["active"] is False and "secret" not in changed
    rotated = call("patch", f"/webhooks/{body['id']}", key, {"rotateSecret": True}).json()
    assert rotated["secret"] != body["secret"]
    assert call("patch", f"/webhooks/{body['id']}", key, {"secret": "x"}).json()["error"]["field"] == "secret"
    scoped = call(
        "post", "/webhooks", key, {"url": receiver.url, "events": ["memory.deleted"], "agentId": agent.public_id}
    ).json()
    assert scoped["agentId"] == agent.public_id
    theirs = agent_services.agent_create(team=other_team[0], name="Globex")
    foreign = call(
        "post", "/webhooks", key, {"url": receiver.url, "events": ["memory.deleted"], "agentId": theirs.public_id}
    )
    assert foreign.json()["error"]["code"] == "agent_not_found"
    assert call("delete", f"/webhooks/{body['id']}", key).status_code == 204
    assert call("get", f"/webhooks/{body['id']}", key).json()["error"]["code"] == "webhook_not_found"


def test_refused_endpoints(key, settings):
    settings.WEBHOOKS_ALLOW_HTTP = False
    for body, field in [
        ({"url": "http://example.com/hook", "events": ["memory.updated"]}, "url"),
        ({"url": "ftp://example.com/hook", "events": ["memory.updated"]}, "url"),
        ({"url": "https://example.com/hook", "events": ["memory.read"]}, "events"),
        ({"url": "https://example.com/hook", "events": []}, "events"),
    ]:
        answer = call("post", "/webhooks", key, body)
        assert answer.status_code == 400 and answer.json()["error"]["field"] == field, answer.content
    assert not Endpoint.objects.exists()


def test_another_teams_endpoint_is_not_found(team, key, other_team, receiver):
    theirs = services.endpoint_create(team=other_team[0], url=receiver.url, events=["memory.updated"])
    for method, data in [("get", None), ("patch", {"active": False}), ("delete", None)]:
        answer = call(method, f"/webhooks/{theirs.public_id}", key, data)
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "webhook_not_found"
    assert Endpoint.objects.get(pk=theirs.pk).active is True
    assert call("get", "/webhooks", key).json()["webhooks"] == []


# --- Deliveries ---------------------------------------------------------------------------


def test_each_memory_change_is_delivered_signed_with_ids_and_counts_only(
    team, agent, key, receiver, django_capture_on_commit_callbacks
):
    endpoint = services.endpoint_create(team=team, url=receiver.url, events=list(services.EVENTS))
    base = f"/agents/{agent.public_id}/end-users/u_ananya"
    with django_capture_on_commit_callbacks(execute=True):
        call("put", f"{base}/memory", key, {"text": "Prefers email over phone.\nWorks from the Pune office."})
    with django_capture_on_commit_callbacks(execute=True):
        call("delete", f"{base}/memory", key)
    with django_capture_on_commit_callbacks(execute=True):
        call("post", f"{base}/memory/stop", key, {"stop": True})
    with django_capture_on_commit_callbacks(execute=True):
        call("delete", "/end-users/u_ananya", key)
    events = receiver.events(endpoint.secret)
    assert [e["type"] for e in events] == ["memory.updated", "memory.deleted", "memory.stopped", "end_user.erased"]
    for event in events:
        assert event["id"].startswith("dlv_") and event["data"]["agentId"] == agent.public_id
        assert event["data"]["endUserId"] == "u_ananya"
    assert events[0]["data"]["lines"] == 2 and "text" not in events[0]["data"]
    assert events[3]["data"]["removed"]["endUsers"] == 1
    assert "Pune" not in b"".join(r["body"] for r in receiver.requests).decode()
    assert receiver.requests[0]["headers"]["agentnava-event"] == "memory.updated"
    assert set(Delivery.objects.values_list("status", flat=True)) == {"succeeded"}
    endpoint.refresh_from_db()
    assert endpoint.last_status == "succeeded" and endpoint.last_delivery_at is not None
    read = call("get", f"/webhooks/{endpoint.public_id}", key).json()
    # The erase took their earlier deliveries out of the history; its own event stays.
    assert [d["event"] for d in read["deliveries"]] == ["end_user.erased"]
    assert read["deliveries"][0]["lastResponseClass"] == "2xx"


def test_text_only_for_an_endpoint_that_opted_in_and_only_its_events_and_agent(
    team, agent, receiver, django_capture_on_commit_callbacks
):
    other = agent_services.agent_create(team=team, name="Sales", config={"memorySettings": {"on": True}})
    with_text = services.endpoint_create(
        team=team, url=receiver.url, events=["memory.updated"], include_text=True, agent=agent
    )
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id="u_1")
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.memory_set(end_user=end_user, text="Likes tea.")
        memory_services.memory_stop(end_user=end_user)  # not subscribed
        memory_services.memory_set(
            end_user=agent_services.end_user_get_or_create(agent=other, external_id="u_2"), text="Other agent."
        )
    [event] = receiver.events(with_text.secret)
    assert event["type"] == "memory.updated" and event["data"]["endUserId"] == "u_1"
    # The text is read when sending: after the stop it is empty, and the delivery row never held it.
    assert event["data"]["text"] in ("Likes tea.", "")
    assert "text" not in Delivery.objects.get().data


def test_a_failed_delivery_is_retried_with_exponential_backoff_then_gives_up(
    team, agent, receiver, django_capture_on_commit_callbacks
):
    endpoint = services.endpoint_create(team=team, url=receiver.url, events=["memory.updated"])
    receiver.statuses = [500, 503]
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.memory_set(
            end_user=agent_services.end_user_get_or_create(agent=agent, external_id="u_1"), text="Likes tea."
        )
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_response) == ("retrying", 1, "5xx")
    first_wait = delivery.next_attempt_at - delivery.last_attempt_at
    assert first_wait == services.backoff(1)
    assert services.deliveries_due(now=delivery.last_attempt_at + first_wait - timedelta(seconds=1)) == []
    due_at = delivery.next_attempt_at
    assert services.deliveries_due(now=due_at) == [delivery.pk]
    assert services.deliver(delivery.pk, now=due_at) == "retrying"
    delivery.refresh_from_db()
    assert delivery.next_attempt_at - due_at == services.backoff(2) == 2 * services.backoff(1)
    assert services.deliver(delivery.pk) == "succeeded"
    assert services.deliver(delivery.pk) is None  # done: never sent twice
    assert len(receiver.requests) == 3
    # Each attempt is signed afresh with its own time, and the same delivery id.
    assert len({r["headers"]["agentnava-delivery"] for r in receiver.requests}) == 1
    assert all(
        signing.verify(endpoint.secret, r["body"], r["headers"][signing.HEADER.lower()]) for r in receiver.requests
    )
    # An endpoint that never answers 2xx: failed after MAX_ATTEMPTS, and the endpoint says so.
    receiver.statuses = [500] * services.MAX_ATTEMPTS
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.memory_set(
            end_user=agent_services.end_user_get_or_create(agent=agent, external_id="u_1"), text="Likes coffee."
        )
    failing = Delivery.objects.exclude(pk=delivery.pk).get()
    while services.deliver(failing.pk) == "retrying":
        pass
    failing.refresh_from_db()
    assert (failing.status, failing.attempts) == ("failed", services.MAX_ATTEMPTS)
    assert Endpoint.objects.get(pk=endpoint.pk).last_status == "failed"


def test_a_private_address_is_checked_again_at_delivery(
    team, agent, receiver, settings, django_capture_on_commit_callbacks
):
    """Registered while private targets were allowed, then the setting is off: the delivery
    checks the address again and sends nothing."""
    services.endpoint_create(team=team, url=receiver.url, events=["memory.updated"])
    settings.WEBHOOKS_ALLOW_PRIVATE = False
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.memory_set(
            end_user=agent_services.end_user_get_or_create(agent=agent, external_id="u_1"), text="Likes tea."
        )
    delivery = Delivery.objects.get()
    assert delivery.status == "retrying" and delivery.last_error == sending.NOT_ALLOWED
    assert delivery.last_response == "no_response"
    assert receiver.requests == []


def test_the_signature_refuses_a_changed_body_another_secret_and_an_old_time():
    body = b'{"id":"dlv_1"}'
    header = signing.sign("whsec_a", body, timestamp=1_000_000)
    assert signing.verify("whsec_a", body, header, now=1_000_000 + 299)
    assert not signing.verify("whsec_a", body, header, now=1_000_000 + 301)  # a replay, later
    assert not signing.verify("whsec_a", body + b" ", header, now=1_000_000)
    assert not signing.verify("whsec_b", body, header, now=1_000_000)
    assert not signing.verify("whsec_a", body, "v1=abc", now=1_000_000)


# --- The web page -------------------------------------------------------------------------


def test_the_web_page_adds_pauses_and_removes_an_endpoint(team, member_client, receiver, other_team):
    theirs = services.endpoint_create(team=other_team[0], url=receiver.url, events=["memory.updated"])
    for action in ("toggle", "delete"):
        assert member_client.post(f"/settings/webhooks/{theirs.public_id}/{action}").status_code == 404
    assert Endpoint.objects.get(pk=theirs.pk).active is True
    assert theirs.url.encode() not in member_client.get("/settings/webhooks/").content
    theirs.delete()
    page = member_client.get("/settings/webhooks/")
    assert page.status_code == 200 and b"No endpoints yet" in page.content
    added = member_client.post(
        "/settings/webhooks/", {"url": receiver.url, "events": ["memory.stopped", "end_user.erased"]}
    )
    endpoint = Endpoint.objects.get(team=team)
    assert endpoint.secret.encode() in added.content and endpoint.events == ["memory.stopped", "end_user.erased"]
    assert endpoint.include_text is False
    member_client.post(f"/settings/webhooks/{endpoint.public_id}/toggle")
    assert Endpoint.objects.get(pk=endpoint.pk).active is False
    member_client.post(f"/settings/webhooks/{endpoint.public_id}/delete")
    assert not Endpoint.objects.exists()


def test_an_erase_clears_their_finished_deliveries_and_old_ones_are_pruned(
    team, agent, receiver, django_capture_on_commit_callbacks
):
    services.endpoint_create(team=team, url=receiver.url, events=list(services.EVENTS))
    mine = agent_services.end_user_get_or_create(agent=agent, external_id="u_1")
    other = agent_services.end_user_get_or_create(agent=agent, external_id="u_2")
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.memory_set(end_user=mine, text="Likes tea.")
        memory_services.memory_set(end_user=other, text="Likes coffee.")
    assert Delivery.objects.filter(status="succeeded").count() == 2
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.end_user_erase(end_user=mine)
    # Only the erase's own event still names u_1; u_2's history stays.
    assert sorted(Delivery.objects.values_list("event", "data__endUserId")) == [
        ("end_user.erased", "u_1"),
        ("memory.updated", "u_2"),
    ]
    assert services.prune(now=timezone.now() + timedelta(days=services.KEEP_DAYS - 1)) == 0
    assert services.prune(now=timezone.now() + timedelta(days=services.KEEP_DAYS + 1)) == 2
    assert not Delivery.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_over_http_register_change_and_remove(live_server, team, settings):
    from tests.api_helpers import api_for

    settings.WEBHOOKS_ALLOW_HTTP = False
    api = api_for(live_server, team)
    made = api.post("/webhooks", {"url": "https://example.com/hook", "events": ["memory.stopped"]})
    assert made.status == 201 and made.body["secret"].startswith("whsec_")
    changed = api.patch(
        f"/webhooks/{made.body['id']}", {"events": ["memory.stopped", "memory.deleted"], "includeText": True}
    )
    assert (
        changed.status == 200
        and changed.body["events"] == ["memory.stopped", "memory.deleted"]
        and changed.body["includeText"]
    )
    assert api.patch(f"/webhooks/{made.body['id']}", {"url": "http://example.com/hook"}).code == "invalid_webhook"
    assert api.get("/webhooks").body["webhooks"][0]["id"] == made.body["id"]
    assert api.delete(f"/webhooks/{made.body['id']}").status == 204
    assert not Endpoint.objects.exists()


def test_endpoints_are_read_once_a_transaction_and_an_endpoint_change_is_seen_at_once(team, agent):
    """The writer's batches change many memories in one transaction: the team's endpoints are read
    once in it (issue 14), and creating, pausing or removing one in this process is seen by the
    very next change."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    end_user = agent_services.end_user_get_or_create(agent=agent, external_id="u_1")

    def change(text):
        memory_services.memory_set(end_user=end_user, text=text)
        return Delivery.objects.count()

    with transaction.atomic():
        assert change("Prefers email over phone.") == 0  # no endpoint yet: nothing queued
        endpoint = services.endpoint_create(team=team, url="https://example.com/hook", events=["memory.updated"])
        assert change("Prefers phone over email.") == 1
        with CaptureQueriesContext(connection) as queries:
            assert change("Uses the Android app.") == 2
            assert change("Uses the iOS app.") == 3
        assert (
            sum("webhooks_endpoint" in q["sql"] and q["sql"].startswith("SELECT") for q in queries.captured_queries)
            == 0
        )
        services.endpoint_update(endpoint=endpoint, changes={"active": False})
        assert change("Uses the web app.") == 3  # paused: seen by the next change


def test_the_webhooks_page_asks_before_removing_an_endpoint_and_names_it(team, user, monkeypatch):
    monkeypatch.setattr(services, "_check_url", lambda url: url)  # no address lookups here
    endpoint = services.endpoint_create(team=team, url="https://hooks.example.com/in", events=["memory.updated"])
    client = Client()
    client.force_login(user)
    page = client.get(reverse("webhooks:webhooks")).content.decode()
    remove = page.split(f'action="{reverse("webhooks:webhook_delete", args=[endpoint.public_id])}"')[1].split(
        "</form>"
    )[0]
    assert 'data-confirm="Remove the endpoint https://hooks.example.com/in?' in remove
    assert 'aria-label="Remove the endpoint https://hooks.example.com/in"' in remove
