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
