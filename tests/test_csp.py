"""The Content-Security-Policy header: strict on the app's pages (no inline script or style, no
framing), absent from the website chat's endpoints and script, which live on customers' pages."""

import json

import pytest
from django.test import Client


def directives(response) -> dict:
    return {part.split()[0]: part.split()[1:] for part in response["Content-Security-Policy"].split("; ")}


@pytest.mark.parametrize("path", ["/accounts/login/", "/accounts/password/reset/", "/api/docs/"])
def test_pages_have_a_strict_policy(db, path):
    policy = directives(Client().get(path))
    assert policy["script-src"] == ["'self'"] and policy["style-src"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"] and policy["object-src"] == ["'none'"]
    assert policy["default-src"] == ["'self'"]


def test_signed_in_pages_have_it_and_no_inline_script(member_client, agent):
    for path in (f"/agents/{agent.public_id}/", f"/agents/{agent.public_id}/memory/", "/settings/api-keys/"):
        response = member_client.get(path)
        assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
        html = response.content.decode()
        assert " onclick=" not in html and " style=" not in html and "hx-on" not in html
        assert "<script>" not in html and "<style" not in html


def test_the_embed_is_left_to_the_customers_page(client, agent):
    assert "Content-Security-Policy" not in client.get("/embed/v1.js")
    config = client.get(f"/embed/v1/agents/{agent.public_id}/config")
    assert config.status_code == 200 and "Content-Security-Policy" not in config
    start = client.post(
        f"/embed/v1/agents/{agent.public_id}/start", data=json.dumps({}), content_type="application/json"
    )
    assert start.status_code == 200 and "Content-Security-Policy" not in start


@pytest.mark.parametrize(
    "path", ["/accounts/login/", "/healthz", "/embed/v1.js", "/api/v1/agents", "/static/css/app.css", "/nope/"]
)
def test_every_response_has_a_permissions_policy(db, path):
    policy = Client().get(path)["Permissions-Policy"]
    for feature in ("camera=()", "microphone=()", "geolocation=()", "payment=()", "usb=()"):
        assert feature in policy


def test_signed_in_pages_and_key_answers_are_private_and_never_stored(member_client, agent, team):
    from agents import services as agent_services

    for path in (f"/agents/{agent.public_id}/", "/settings/api-keys/", "/settings/team/", "/settings/webhooks/"):
        response = member_client.get(path)
        assert response.status_code == 200 and response["Cache-Control"] == "private, no-store", path
    _, raw = agent_services.api_key_create(team=team, name="t")
    answer = Client().get("/api/v1/agents", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert answer.status_code == 200 and answer["Cache-Control"] == "private, no-store"
    # The website chat's script, for anyone, keeps its own caching.
    assert "no-store" not in Client().get("/embed/v1.js").get("Cache-Control", "")
