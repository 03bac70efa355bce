"""Where a webhook may go, and what a receiver can make us do: registration refuses every address
that is not https to a globally routable host (the API and the web page, the field named); a
delivery resolves once and connects to that address (DNS rebinding), TLS verifying the host name;
it never follows a redirect and keeps only the status class; a paused or removed endpoint is sent
nothing, retries included. Real HTTP(S) receivers on 127.0.0.x, let through by the development
setting where a test needs a loopback receiver."""

import json
import socket
import ssl
import subprocess
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from rest_framework.test import APIClient

from agents import services as agent_services
from memory.store import services as memory_services
from webhooks import addresses, sending, services
from webhooks.models import Delivery, Endpoint

pytestmark = pytest.mark.django_db


class IPv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class Receiver:
    """An HTTP(S) server on `host`: records each request (path, headers, body) and answers
    `status` with `headers` and a body that no delivery may keep."""

    def __init__(self, host="127.0.0.1", port=0, status=200, headers=None, tls=None):
        self.requests = []
        self.status, self.headers = status, dict(headers or {})
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                outer.requests.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": self.rfile.read(length),
                    }
                )
                body = b"internal banner: db-7.corp:5432 up"
                self.send_response(outer.status)
                for name, value in outer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET = _answer

            def log_message(self, *args):
                pass

        self.server = (IPv6Server if ":" in host else ThreadingHTTPServer)((host, port), Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receivers(settings):
    """Start receivers on loopback; private targets allowed (the development setting), as a
    receiver on 127.0.0.1 needs."""
    settings.WEBHOOKS_ALLOW_HTTP = True
    settings.WEBHOOKS_ALLOW_PRIVATE = True
    started = []

    def start(**kwargs):
        started.append(Receiver(**kwargs))
        return started[-1]

    yield start
    for receiver in started:
        receiver.stop()


@pytest.fixture
def key(team):
    return agent_services.api_key_create(team=team, name="tests")[1]


def call(method, path, key, data=None):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return getattr(client, method)(f"/api/v1{path}", data=data, format="json")


def fake_dns(monkeypatch, answers):
    """Patch the resolver: `answers` maps a host to a list of answers, one per lookup (the last
    repeats). Answers the list of lookups made."""
    lookups = []

    def resolve(host, port):
        lookups.append(host)
        if host not in answers:
            raise OSError("no such name")
        seen = lookups.count(host)
        replies = answers[host]
        return list(replies[min(seen, len(replies)) - 1])

    monkeypatch.setattr(addresses, "resolve", resolve)
    return lookups


def one_change(agent, django_capture_on_commit_callbacks, text="Likes tea."):
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.memory_set(
            end_user=agent_services.end_user_get_or_create(agent=agent, external_id="u_1"), text=text
        )


# --- Registration -------------------------------------------------------------------------

REFUSED = [
    "https://10.1.2.3/hook",
    "https://127.0.0.1/hook",
    "https://127.8.9.10:8443/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://100.100.100.200/meta",  # carrier-grade NAT range: a cloud's metadata service
    "https://100.64.0.1/hook",
    "https://192.168.1.1/hook",
    "https://0.0.0.0/hook",
    "https://[::1]/hook",
    "https://[::ffff:127.0.0.1]/hook",  # IPv4-mapped loopback
    "https://[::ffff:a9fe:a9fe]/hook",  # IPv4-mapped 169.254.169.254
    "https://[2002:7f00:1::]/hook",  # 6to4 of 127.0.0.1
    "https://[2002:a00:1::]/hook",  # 6to4 of 10.0.0.1
    "https://[64:ff9b::a00:1]/hook",  # NAT64 of 10.0.0.1
    "https://[64:ff9b::7f00:1]/hook",  # NAT64 of 127.0.0.1
    "https://[64:ff9b:1::1]/hook",  # local-use NAT64
    "https://[::7f00:1]/hook",  # IPv4-compatible 127.0.0.1
    "https://[fe80::1]/hook",
    "https://[fc00::1]/hook",
    "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook",  # Teredo
    "https://224.0.0.1/hook",
    "https://localhost/hook",
    "https://internal.corp.test/hook",  # resolves to a private address (below)
    "https://mixed.test/hook",  # one public and one private answer
    "https://nowhere.test/hook",  # does not resolve
    "http://93.184.215.14/hook",  # public, but http
    "ftp://93.184.215.14/hook",
    "https://user:pw@93.184.215.14/hook",
    "https:///hook",
]


@pytest.fixture
def dns(monkeypatch):
    return fake_dns(
        monkeypatch,
        {
            "internal.corp.test": [["10.20.30.40"]],
            "mixed.test": [["93.184.215.14", "192.168.0.7"]],
            "public.test": [["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]],
            "localhost": [["127.0.0.1", "::1"]],
            "93.184.215.14": [["93.184.215.14"]],
            "2606:2800:21f:cb07:6820:80da:af6b:8b2c": [["2606:2800:21f:cb07:6820:80da:af6b:8b2c"]],
            "2002:5db8:d70e::1": [["2002:5db8:d70e::1"]],
            **{host: [[host]] for host in _literal_hosts(REFUSED)},
        },
    )


def _literal_hosts(urls):
    from urllib.parse import urlsplit

    hosts = []
    for url in urls:
        host = urlsplit(url).hostname
        if host and (host[0].isdigit() or ":" in host):
            hosts.append(host)
    return hosts


@pytest.mark.parametrize("url", REFUSED)
def test_registration_refuses_every_address_that_is_not_https_to_a_global_host(key, team, dns, url):
    answer = call("post", "/webhooks", key, {"url": url, "events": ["memory.updated"]})
    assert answer.status_code == 400, answer.content
    error = answer.json()["error"]
    assert (error["code"], error["field"]) == ("invalid_webhook", "url") and error["message"]
    assert not Endpoint.objects.exists()


def test_registration_says_why_and_a_change_of_url_is_checked_too(key, team, dns):
    refused = call("post", "/webhooks", key, {"url": "https://internal.corp.test/h", "events": ["memory.updated"]})
    assert "internal.corp.test resolves to 10.20.30.40" in refused.json()["error"]["message"]
    mapped = call("post", "/webhooks", key, {"url": "https://[::ffff:127.0.0.1]/h", "events": ["memory.updated"]})
    assert "127.0.0.1" in mapped.json()["error"]["message"]
    made = call("post", "/webhooks", key, {"url": "https://public.test/hook", "events": ["memory.updated"]})
    assert made.status_code == 201, made.content
    for url in ("https://169.254.169.254/", "https://mixed.test/hook", "http://public.test/hook"):
        changed = call("patch", f"/webhooks/{made.json()['id']}", key, {"url": url})
        assert changed.status_code == 400 and changed.json()["error"]["field"] == "url", url
    assert Endpoint.objects.get().url == "https://public.test/hook"


@pytest.mark.parametrize(
    "url",
    [
        "https://public.test/hook",
        "https://93.184.215.14/hook",
        "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:8443/hook",
        "https://[2002:5db8:d70e::1]/hook",  # 6to4 of a public address
    ],
)
def test_registration_takes_a_global_address(key, team, dns, url):
    answer = call("post", "/webhooks", key, {"url": url, "events": ["memory.updated"]})
    assert answer.status_code == 201, answer.content


def test_the_web_page_puts_the_reason_on_the_address_field(team, member_client, dns):
    for url, reason in [
        ("https://169.254.169.254/latest", "169.254.169.254, not a globally routable address"),
        ("https://internal.corp.test/hook", "internal.corp.test resolves to 10.20.30.40"),
        ("http://public.test/h", "The url must be https"),
    ]:
        page = member_client.post("/settings/webhooks/", {"url": url, "events": ["memory.updated"]})
        assert page.status_code == 400
        html = page.content.decode()
        error = html[html.index('data-testid="url-error"') :]
        assert reason in error[: error.index("</p>")], url
    assert not Endpoint.objects.exists()
    added = member_client.post("/settings/webhooks/", {"url": "https://public.test/hook", "events": ["memory.updated"]})
    assert added.status_code == 200 and Endpoint.objects.get().url == "https://public.test/hook"


def test_the_addresses_rule_unwraps_every_ipv4_form():
    for ip in ("::ffff:10.0.0.1", "2002:a9fe:a9fe::", "64:ff9b::6464:64c8", "2001:0:5db8:d70e:0:fbff:3f57:feff"):
        assert addresses.address_refusal(ip), ip
    for ip in ("93.184.215.14", "::ffff:93.184.215.14", "64:ff9b::5db8:d70e", "2002:5db8:d70e::"):
        assert addresses.address_refusal(ip) is None, ip


# --- Delivering ---------------------------------------------------------------------------


def test_a_delivery_reaches_a_local_receiver_and_keeps_only_the_status_class(
    team, agent, key, receivers, django_capture_on_commit_callbacks
):
    receiver = receivers(status=503, headers={"X-Backend": "db-7.corp"})
    endpoint = services.endpoint_create(
        team=team, url=f"http://127.0.0.1:{receiver.port}/hook", events=["memory.updated"]
    )
    one_change(agent, django_capture_on_commit_callbacks)
    [request] = receiver.requests
    assert request["method"] == "POST" and json.loads(request["body"])["type"] == "memory.updated"
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.last_response) == ("retrying", "5xx")
    assert delivery.last_error == sending.ERROR_STATUS.format("5xx")
    read = call("get", f"/webhooks/{endpoint.public_id}", key).content.decode()
    for leaked in ("db-7", "banner", "X-Backend", "x-backend"):
        assert leaked not in read
    [answered] = json.loads(read)["deliveries"]
    assert answered["lastResponseClass"] == "5xx"
    # The exact code is nowhere: not in the API's answer, not in the row (ids and times may hold "503").
    assert 503 not in answered.values() and "503" not in answered.values()
    assert 503 not in Delivery.objects.values().get().values()


def test_a_redirect_is_not_followed_and_is_a_failed_attempt(
    team, agent, key, receivers, django_capture_on_commit_callbacks
):
    elsewhere = receivers()
    for status in (301, 302, 307, 308):
        redirecting = receivers(status=status, headers={"Location": f"http://127.0.0.1:{elsewhere.port}/steal"})
        Endpoint.objects.all().delete()
        services.endpoint_create(team=team, url=f"http://127.0.0.1:{redirecting.port}/hook", events=["memory.updated"])
        one_change(agent, django_capture_on_commit_callbacks, text=f"Answer {status}.")
        assert len(redirecting.requests) == 1
        delivery = Delivery.objects.get()
        assert (delivery.status, delivery.last_response, delivery.last_error) == (
            "retrying",
            "3xx",
            sending.REDIRECT,
        )
    assert elsewhere.requests == []


def test_dns_rebinding_the_pinned_address_is_used(
    team, agent, receivers, monkeypatch, django_capture_on_commit_callbacks
):
    """The name answers 127.0.0.1 to the first lookup and 127.0.0.2 to any later one: the
    delivery looks up once and connects to what that lookup answered."""
    checked = receivers(host="127.0.0.1")
    rebound = receivers(host="127.0.0.2", port=checked.port)
    services.endpoint_create(team=team, url=f"http://hooks.test:{checked.port}/hook", events=["memory.updated"])
    lookups = fake_dns(monkeypatch, {"hooks.test": [["127.0.0.1"], ["127.0.0.2"]]})
    one_change(agent, django_capture_on_commit_callbacks)
    assert lookups == ["hooks.test"]
    assert len(checked.requests) == 1 and rebound.requests == []
    assert checked.requests[0]["headers"]["host"] == f"hooks.test:{checked.port}"
    assert Delivery.objects.get().status == "succeeded"


def test_a_name_resolving_to_ipv6_is_connected_to_that_address(
    team, agent, receivers, monkeypatch, django_capture_on_commit_callbacks
):
    receiver = receivers(host="::1")
    services.endpoint_create(team=team, url=f"http://hooks6.test:{receiver.port}/hook", events=["memory.updated"])
    fake_dns(monkeypatch, {"hooks6.test": [["::1"]]})
    one_change(agent, django_capture_on_commit_callbacks)
    assert len(receiver.requests) == 1 and receiver.requests[0]["headers"]["host"] == f"hooks6.test:{receiver.port}"
    assert Delivery.objects.get().status == "succeeded"


def test_dns_rebinding_the_checked_answer_is_the_one_refused(
    team, agent, receivers, settings, monkeypatch, django_capture_on_commit_callbacks
):
    """With the check on: the one lookup answers a private address, so nothing is sent, though a
    second lookup would have answered a public one."""
    receiver = receivers()
    services.endpoint_create(team=team, url=f"http://hooks.test:{receiver.port}/hook", events=["memory.updated"])
    settings.WEBHOOKS_ALLOW_PRIVATE = False
    lookups = fake_dns(monkeypatch, {"hooks.test": [["127.0.0.1"], ["93.184.215.14"]]})
    one_change(agent, django_capture_on_commit_callbacks)
    assert lookups == ["hooks.test"] and receiver.requests == []
    delivery = Delivery.objects.get()
    assert (delivery.last_response, delivery.last_error) == ("no_response", sending.NOT_ALLOWED)


@pytest.fixture
def tls(tmp_path):
    """A test CA and a certificate it signed for hooks.test (openssl): the client's context
    trusts the CA, the server's serves the certificate."""

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=tmp_path, check=True, capture_output=True)

    openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
        "-subj", "/CN=Test CA", "-keyout", "ca.key", "-out", "ca.pem",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
    )  # fmt: skip
    openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-subj", "/CN=hooks.test", "-keyout", "leaf.key", "-out", "leaf.csr",
    )  # fmt: skip
    (tmp_path / "ext.cnf").write_text("subjectAltName=DNS:hooks.test\n")
    openssl(
        "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-out", "leaf.pem", "-extfile", "ext.cnf",
    )  # fmt: skip
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(tmp_path / "leaf.pem", tmp_path / "leaf.key")
    client = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))
    return server, client


def test_tls_verifies_the_host_name_while_connecting_to_the_pinned_address(
    team, agent, receivers, monkeypatch, tls, django_capture_on_commit_callbacks
):
    server_context, client_context = tls
    monkeypatch.setattr(sending, "TLS_VERIFY", client_context)
    receiver = receivers(tls=server_context)
    fake_dns(monkeypatch, {"hooks.test": [["127.0.0.1"]], "other.test": [["127.0.0.1"]]})
    services.endpoint_create(team=team, url=f"https://hooks.test:{receiver.port}/hook", events=["memory.updated"])
    one_change(agent, django_capture_on_commit_callbacks)
    assert Delivery.objects.get().status == "succeeded" and len(receiver.requests) == 1
    assert receiver.requests[0]["headers"]["host"] == f"hooks.test:{receiver.port}"
    # The same address under a name the certificate does not hold: the handshake fails, nothing sent.
    Endpoint.objects.all().delete()
    services.endpoint_create(team=team, url=f"https://other.test:{receiver.port}/hook", events=["memory.updated"])
    one_change(agent, django_capture_on_commit_callbacks, text="Likes coffee.")
    delivery = Delivery.objects.get()
    assert (delivery.last_response, delivery.last_error) == ("no_response", sending.NOT_ANSWERED)
    assert len(receiver.requests) == 1


def test_a_paused_or_removed_endpoint_sends_nothing_retries_included(
    team, agent, key, receivers, django_capture_on_commit_callbacks
):
    receiver = receivers(status=500)
    paused = services.endpoint_create(
        team=team, url=f"http://127.0.0.1:{receiver.port}/paused", events=["memory.updated"]
    )
    removed = services.endpoint_create(
        team=team, url=f"http://127.0.0.1:{receiver.port}/removed", events=["memory.updated"]
    )
    one_change(agent, django_capture_on_commit_callbacks)
    assert sorted(r["path"] for r in receiver.requests) == ["/paused", "/removed"]
    assert set(Delivery.objects.values_list("status", flat=True)) == {"retrying"}
    receiver.status = 200
    assert call("patch", f"/webhooks/{paused.public_id}", key, {"active": False}).status_code == 200
    assert call("delete", f"/webhooks/{removed.public_id}", key).status_code == 204
    waiting = Delivery.objects.get()
    due = waiting.next_attempt_at + timedelta(seconds=1)
    assert services.deliveries_due(now=due) == [waiting.pk]  # the retry is still queued ...
    assert services.deliver(waiting.pk, now=due) == "failed"  # ... and sends nothing when it runs
    waiting.refresh_from_db()
    assert waiting.last_error == services.PAUSED and waiting.attempts == 1
    assert services.deliver(waiting.pk, now=due) is None
    assert len(receiver.requests) == 2
    # Resumed: new changes are delivered again; the paused retry stays unsent.
    call("patch", f"/webhooks/{paused.public_id}", key, {"active": True})
    one_change(agent, django_capture_on_commit_callbacks, text="Likes coffee.")
    assert sorted(r["path"] for r in receiver.requests) == ["/paused", "/paused", "/removed"]
    assert Delivery.objects.get(pk=waiting.pk).status == "failed"
