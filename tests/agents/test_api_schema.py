"""The OpenAPI schema is generated from the code and served at /api/schema/; the docs page at
/api/docs/ is served from our own static files, with nothing from a CDN."""

import json
import re

import pytest
from django.test import Client
from drf_spectacular.validation import validate_schema

from surfaces.http.errors import error_codes

pytestmark = pytest.mark.django_db

OPERATIONS = {
    ("get", "/api/v1/agents/{agent_id}"): "agent_get",
    ("patch", "/api/v1/agents/{agent_id}"): "agent_update",
    ("delete", "/api/v1/agents/{agent_id}"): "agent_delete",
    ("get", "/api/v1/agents/{agent_id}/versions"): "agent_versions",
    ("get", "/api/v1/agents/{agent_id}/memories"): "agent_memories",
    ("post", "/api/v1/agents/{agent_id}/conversations"): "agent_start",
    ("post", "/api/v1/agents/{agent_id}/builder"): "agent_builder",
    ("get", "/api/v1/agents/{agent_id}/end-users/{end_user_id}/memory"): "memory_get",
    ("put", "/api/v1/agents/{agent_id}/end-users/{end_user_id}/memory"): "memory_set",
    ("delete", "/api/v1/agents/{agent_id}/end-users/{end_user_id}/memory"): "memory_delete",
    ("post", "/api/v1/agents/{agent_id}/end-users/{end_user_id}/memory/stop"): "memory_stop",
    ("post", "/api/v1/agents/{agent_id}/end-users/{end_user_id}/consent"): "end_user_consent",
    ("delete", "/api/v1/agents/{agent_id}/end-users/{end_user_id}"): "end_user_erase",
    ("post", "/api/v1/conversations/{conversation_id}/messages"): "conversation_send",
    ("post", "/api/v1/conversations/{conversation_id}/events"): "conversation_record",
    ("get", "/api/v1/agents"): "agents_list",
    ("post", "/api/v1/agents"): "agent_create",
    ("get", "/api/v1/agents/{agent_id}/end-users"): "agent_end_users",
    ("get", "/api/v1/agents/{agent_id}/end-users/{end_user_id}/conversations"): "end_user_conversations",
    ("get", "/api/v1/agents/{agent_id}/end-users/{end_user_id}/export"): "end_user_export",
    ("delete", "/api/v1/end-users/{end_user_id}"): "team_end_user_erase",
    ("get", "/api/v1/conversations/{conversation_id}"): "conversation_get",
    ("get", "/api/v1/webhooks"): "webhooks_list",
    ("get", "/api/v1/audit-log"): "audit_log_list",
    ("post", "/api/v1/agents/{agent_id}/try"): "agent_try",
    ("get", "/api/v1/agents/{agent_id}/try/{job_id}"): "agent_try_get",
    ("post", "/api/v1/agents/{agent_id}/try/{job_id}/cancel"): "agent_try_cancel",
    ("post", "/api/v1/agents/{agent_id}/apply"): "agent_apply",
    ("get", "/api/v1/agents/{agent_id}/apply/{job_id}"): "agent_apply_get",
    ("post", "/api/v1/agents/{agent_id}/apply/{job_id}/cancel"): "agent_apply_cancel",
    ("post", "/api/v1/agents/{agent_id}/instruction-check"): "agent_instruction_check",
    ("post", "/api/v1/webhooks"): "webhook_create",
    ("get", "/api/v1/webhooks/{webhook_id}"): "webhook_get",
    ("patch", "/api/v1/webhooks/{webhook_id}"): "webhook_update",
    ("delete", "/api/v1/webhooks/{webhook_id}"): "webhook_delete",
}


def fetch(url):
    """(status, headers, body) in process; static files come through whitenoise's middleware."""
    response = Client().get(url)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response.status_code, dict(response.headers), body


@pytest.fixture
def schema():
    status, _, body = fetch("/api/schema/?format=json")
    assert status == 200
    return json.loads(body)


def test_the_schema_is_openapi_3_valid_and_has_every_endpoint(schema):
    validate_schema(schema)  # raises on an invalid OpenAPI 3 document
    assert schema["openapi"].startswith("3.")
    found = {
        (method, path): operation["operationId"]
        for path, item in schema["paths"].items()
        for method, operation in item.items()
    }
    assert found == OPERATIONS
    bearer = schema["components"]["securitySchemes"]["apiKey"]
    assert (bearer["type"], bearer["scheme"]) == ("http", "bearer")


def test_every_operation_documents_its_errors_with_their_codes(schema):
    documented = set()
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            responses = operation["responses"]
            assert "401" in responses and "429" in responses, (method, path)
            assert operation["security"] == [{"apiKey": []}]
            for status, response in responses.items():
                if status.startswith(("4", "5")):
                    assert response["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
                    codes = re.findall(r"`([a-z_]+)`:", response["description"])
                    assert codes, (method, path, status)
                    assert all(error_codes()[code][0] == int(status) for code in codes)
                    documented.update(codes)
            if "{agent_id}" in path:
                assert "agent_not_found" in responses["404"]["description"]
            if "{end_user_id}" in path or (method, path) == ("post", "/api/v1/agents/{agent_id}/conversations"):
                assert "end_user_id_not_normal" in responses["400"]["description"], (method, path)
            if operation.get("requestBody"):
                assert "invalid_request" in responses["400"]["description"], (method, path)
    # Every code the API can answer is documented at an operation, or (wrong path or method) in the
    # introduction's table, which lists them all; the Error schema's enum too.
    assert set(error_codes()) - documented == {"not_found", "method_not_allowed"}
    table = set(re.findall(r"^\| `([a-z_]+)` \| (\d+) \|", schema["info"]["description"], re.M))
    assert table == {(code, str(status)) for code, (status, _) in error_codes().items()}
    ref = schema["components"]["schemas"]["ErrorBody"]["properties"]["code"]["allOf"][0]["$ref"]
    enum = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]["enum"]
    assert set(enum) == set(error_codes())


def test_the_memory_read_documents_every_r21_field(schema):
    memory = schema["components"]["schemas"]["MemoryOut"]["properties"]
    assert set(memory) == {
        "endUserId",
        "text",
        "stopped",
        "updatedAt",
        "readUpTo",
        "lastRun",
        "stoppedAt",
        "agreedAt",
        "lastChatAt",
        "conversations",
    }
    settings = schema["components"]["schemas"]["AgentMemorySettingsOut"]["properties"]
    assert set(settings) == {
        "on",
        "instructions",
        "keepForDays",
        "quietMinutes",
        "showSwitch",
        "askFirst",
        "privacyUrl",
        "notice",
    }


def test_erase_documents_what_it_removed_and_an_unknown_end_user(schema):
    erase = schema["paths"]["/api/v1/agents/{agent_id}/end-users/{end_user_id}"]["delete"]
    assert "204" not in erase["responses"]
    ok = erase["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert set(schema["components"]["schemas"][ok]["properties"]) == {
        "endUserId",
        "memories",
        "lines",
        "memoryRuns",
        "conversations",
        "messages",
        "actions",
        "consents",
        "endUsers",
    }
    assert "end_user_not_found" in erase["responses"]["404"]["description"]


def test_the_schema_needs_no_key():
    status, headers, body = fetch("/api/schema/")
    assert status == 200 and b"openapi: 3" in body


def test_the_docs_page_is_served_without_a_cdn():
    status, _, body = fetch("/api/docs/")
    page = body.decode()
    assert status == 200 and "swagger-ui" in page.lower()
    # The split view (for the CSP): the page's start-up script is a file that names the schema.
    script = re.search(r'<script src="([^"]*\?script=[^"]*)"', page).group(1).replace("&amp;", "&")
    assert "/api/schema/" in fetch(script)[2].decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert assets and not [url for url in assets if url.startswith(("http:", "https:", "//"))], assets
    assert not re.search(r"jsdelivr|unpkg|cdnjs|googleapis", page)
    assert not re.search(r"""(?:src|href|url)\s*[=:(]\s*["']?(?:https?:)?//""", page)
    for url in assets:
        asset_status, _, asset = fetch(url)
        assert asset_status == 200 and len(asset) > 100, url
