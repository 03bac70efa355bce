"""Fixed regression cases from the schema fuzz (tests/test_schema_fuzz.py). When an on-demand
search (`FUZZ_EXAMPLES=2000 make test-fuzz`) finds a failure, its request is written here as a
plain case, so it is checked on every run whatever the fuzz draws next.

In-process (DRF's test client): these are about what the API answers, not about HTTP itself."""

import pytest
from rest_framework.test import APIClient

from agents import services as agent_services
from agents.models import AgentVersion
from tests.test_schema_fuzz import generated_schema

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(team):
    return agent_services.api_key_create(team=team, name="regressions")[1]


def call(method, path, key=None, **kwargs):
    client = APIClient()
    if key:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return getattr(client, method)(f"/api/v1{path}", format="json", **kwargs)


def test_versions_with_an_unknown_query_parameter_and_no_key_answers_401(agent):
    """The first fuzz failure: a negative case that removed Authorization and added a query
    parameter was answered 200, because the test put a key back and unknown parameters were ignored."""
    answer = call("get", f"/agents/{agent.public_id}/versions?limit=141&before=199297561&x=1")
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "not_authenticated"


@pytest.mark.parametrize(
    "method,path,unknown",
    [
        ("get", "/agents/{agent}/versions?limit=5&x=1", "x"),
        ("get", "/agents/{agent}?include=all", "include"),
        ("get", "/agents/{agent}/memories?page=2", "page"),
        ("get", "/agents/{agent}/end-users/u_1/memory?fields=text", "fields"),
        ("put", "/agents/{agent}/end-users/u_1/memory?dryRun=true", "dryRun"),
        ("post", "/agents/{agent}/conversations?format=json", "format"),
        ("delete", "/agents/{agent}/end-users/u_1?force=1", "force"),
    ],
)
def test_an_unknown_query_parameter_is_refused_by_name_and_changes_nothing(agent, key, method, path, unknown):
    versions_before = AgentVersion.objects.filter(agent=agent).count()
    body = {"text": "Prefers email."} if method == "put" else ({"endUserId": "u_1"} if method == "post" else None)
    answer = call(method, path.format(agent=agent.public_id), key, data=body)
    assert answer.status_code == 400, answer.content
    error = answer.json()["error"]
    assert error["code"] == "invalid_request"
    assert error["field"] == unknown
    assert AgentVersion.objects.filter(agent=agent).count() == versions_before
    assert not agent.end_users.exists()


def test_documented_query_parameters_still_work(agent, key):
    answer = call("get", f"/agents/{agent.public_id}/versions?limit=1", key)
    assert answer.status_code == 200 and len(answer.json()["versions"]) == 1


def test_the_schema_documents_400_for_every_operation():
    """Every operation can now answer 400 (an unknown query parameter): the schema says so, or the
    fuzz's status check would flag the answer as undocumented."""
    schema = generated_schema()
    for path, item in schema["paths"].items():
        if not path.startswith("/api/v1/"):
            continue
        for method, operation in item.items():
            assert "400" in operation["responses"], f"{method.upper()} {path}"
