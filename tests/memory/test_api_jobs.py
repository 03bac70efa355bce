"""Try, Apply and the instruction check through the API: the Memory tab's jobs, started by a POST
that answers the job (202), followed by GET, stopped by cancel. In-process (DRF's client); the
test settings run the queue inline unless a test queues (`queued`)."""

from datetime import timedelta

import pytest
from django_q.conf import Conf
from rest_framework.test import APIClient

from agents import services as agent_services
from agents.models import Plan
from memory.models import Memory
from tests.conftest import make_team
from tests.memory.seed import T0, chat_and_remember, database_fingerprint

pytestmark = pytest.mark.django_db

OFFICE_CHAT = [("user", "I work from the Pune office."), ("user", "Please email me, I prefer email over phone.")]


@pytest.fixture
def key(team):
    return agent_services.api_key_create(team=team, name="tests")[1]


@pytest.fixture
def queued(monkeypatch):
    monkeypatch.setattr(Conf, "SYNC", False)


def call(method, path, key, data=None):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return getattr(client, method)(f"/api/v1{path}", data=data, format="json")


def saved_state():
    return {
        table: digest
        for table, digest in database_fingerprint().items()
        if table not in ("django_q_task", "django_q_ormq")
    }


def test_try_answers_a_job_whose_result_shows_each_person_and_saves_nothing(agent, user, key):
    for i in range(3):
        chat_and_remember(agent, f"u_{i}", OFFICE_CHAT, start=T0 + timedelta(hours=i))
    agent_services.agent_draft_update(
        agent=agent, changes={"memorySettings": {"instructions": "Do not keep office locations."}}, user=user
    )
    before = saved_state()
    started = call("post", f"/agents/{agent.public_id}/try", key, {"people": 2})
    assert started.status_code == 202, started.content
    job = started.json()
    assert job["draft"] is True and job["people"] == 2
    got = call("get", f"/agents/{agent.public_id}/try/{job['id']}", key).json()
    assert got["status"] == "done" and got["done"] == 2
    assert [person["endUserId"] for person in got["results"]] == ["u_2", "u_1"]
    removed = [row for row in got["results"][0]["rows"] if row["status"] == "removed"]
    assert removed and "Pune" in removed[0]["old"] and got["results"][0]["removed"] >= 1
    assert {k: v for k, v in saved_state().items() if not k.startswith("memory_trialjob")} == {
        k: v for k, v in before.items() if not k.startswith("memory_trialjob")
    }
    assert call("get", f"/agents/{agent.public_id}/try/999999", key).json()["error"]["code"] == "job_not_found"
    for body in ({"people": 0}, {"people": 21}, {"people": True}, {"n": 3}):
        assert call("post", f"/agents/{agent.public_id}/try", key, body).status_code == 400, body


def test_one_try_at_a_time_and_cancel(agent, key, queued):
    chat_and_remember(agent, "u_1", OFFICE_CHAT, start=T0)
    first = call("post", f"/agents/{agent.public_id}/try", key, {}).json()
    assert first["status"] == "queued"
    again = call("post", f"/agents/{agent.public_id}/try", key, {})
    assert (again.status_code, again.json()["error"]["code"]) == (409, "job_running")
    cancelled = call("post", f"/agents/{agent.public_id}/try/{first['id']}/cancel", key)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert call("post", f"/agents/{agent.public_id}/try", key, {}).status_code == 202


def test_apply_answers_its_progress_and_can_be_cancelled(agent, key, queued):
    chat_and_remember(agent, "u_1", OFFICE_CHAT, start=T0)
    agent_services.agent_update(
        agent=agent, changes={"memorySettings": {"instructions": "Do not keep office locations."}}
    )
    started = call("post", f"/agents/{agent.public_id}/apply", key)
    assert started.status_code == 202, started.content
    job = started.json()
    assert (job["status"], job["total"], job["reviewed"], job["version"]) == ("queued", 1, 0, 2)
    assert call("post", f"/agents/{agent.public_id}/apply", key).json()["error"]["code"] == "job_running"
    assert call("get", f"/agents/{agent.public_id}/apply/{job['id']}", key).json()["id"] == job["id"]
    cancelled = call("post", f"/agents/{agent.public_id}/apply/{job['id']}/cancel", key).json()
    assert cancelled["status"] == "cancelled"
    assert "Pune" in Memory.objects.get().text  # cancelled before it reviewed anything


def test_apply_runs_to_the_end_inline(agent, key):
    chat_and_remember(agent, "u_1", OFFICE_CHAT, start=T0)
    agent_services.agent_update(
        agent=agent, changes={"memorySettings": {"instructions": "Do not keep office locations."}}
    )
    job = call("post", f"/agents/{agent.public_id}/apply", key).json()
    done = call("get", f"/agents/{agent.public_id}/apply/{job['id']}", key).json()
    assert done["status"] == "done" and done["reviewed"] == 1


def test_jobs_need_a_plan_with_memory(db):
    team, _ = make_team("freeco", plan=Plan.FREE)
    key = agent_services.api_key_create(team=team, name="t")[1]
    agent = agent_services.agent_create(team=team, name="Free bot")
    for path in ("try", "apply"):
        answer = call("post", f"/agents/{agent.public_id}/{path}", key, {} if path == "try" else None)
        assert (answer.status_code, answer.json()["error"]["code"]) == (403, "plan_required")


def test_the_instruction_check_names_what_they_open_and_changes_nothing(agent, key):
    before = saved_state()
    answer = call(
        "post",
        f"/agents/{agent.public_id}/instruction-check",
        key,
        {"instructions": "Keep their health conditions. Note their credit score so we can decide on loans."},
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert "health" in {opened["code"] for opened in body["opened"]}
    assert body["decisions"] == ["lending"]
    assert body["recommendAskFirst"] is True and body["guidance"]
    calm = call(
        "post",
        f"/agents/{agent.public_id}/instruction-check",
        key,
        {"instructions": "Keep which office they work from.", "askFirst": True},
    ).json()
    assert calm["opened"] == [] and calm["decisions"] == [] and calm["recommendAskFirst"] is False
    assert saved_state() == before


@pytest.mark.parametrize("job_id", ["null,null", "0", "-1", "1e3", "99999999999999999999", "١٢"])
def test_a_job_id_that_names_no_job_is_not_found(agent, key, job_id):
    for path in ("try", "apply"):
        for method, suffix in (("get", ""), ("post", "/cancel")):
            answer = call(method, f"/agents/{agent.public_id}/{path}/{job_id}{suffix}", key)
            assert (answer.status_code, answer.json()["error"]["code"]) == (404, "job_not_found"), (path, job_id)


@pytest.mark.django_db(transaction=True)
def test_over_http_try_apply_and_the_check(live_server, team, agent):
    from tests.api_helpers import api_for

    api = api_for(live_server, team)
    chat_and_remember(agent, "u_1", OFFICE_CHAT, start=T0)
    base = f"/agents/{agent.public_id}"
    tried = api.post(f"{base}/try", {"people": 1})
    assert tried.status == 202 and api.get(f"{base}/try/{tried.body['id']}").body["status"] == "done"
    assert api.post(f"{base}/try/{tried.body['id']}/cancel").status == 200
    applied = api.post(f"{base}/apply")
    assert applied.status == 202 and api.get(f"{base}/apply/{applied.body['id']}").body["reviewed"] == 1
    assert api.post(f"{base}/apply/{applied.body['id']}/cancel").body["status"] == "done"
    assert (
        api.post(f"{base}/instruction-check", {"instructions": "Keep their religion."}).body["opened"][0]["code"]
        == "religion"
    )
