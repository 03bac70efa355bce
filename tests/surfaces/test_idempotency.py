"""Idempotency keys on the API (surfaces.http.idempotency): a write sent again with its key changes
nothing and answers the first answer; another request with the same key is refused; keys are per
team; a key is kept 24 hours, then expires (by the schedule or simply by age); a failed request
gives its key back; a kept answer goes with the person or agent it is about."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from agents.models import Agent, Conversation, Message
from memory.models import Memory
from memory.store.services import memory_delete, memory_retention_sweep, memory_set
from ops.schedules import SCHEDULES
from surfaces import tasks
from surfaces.http import idempotency
from surfaces.models import IdempotencyKey
from tests.api_helpers import api_in_process

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(team):
    return api_in_process(team)


def key(value: str) -> dict:
    return {"headers": {"Idempotency-Key": value}}


def test_a_repeated_post_replays_the_first_answer_and_does_nothing(api, agent):
    first = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_once"}, **key("start-1"))
    assert first.status == 201 and "idempotent-replayed" not in first.headers
    again = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_once"}, **key("start-1"))
    assert (again.status, again.body) == (201, first.body)
    assert again.headers["idempotent-replayed"] == "true"
    assert Conversation.objects.filter(agent=agent, end_user__external_id="u_once").count() == 1

    sent = api.post(f"/conversations/{first.body['id']}/messages", {"text": "Hello"}, **key("send-1"))
    resent = api.post(f"/conversations/{first.body['id']}/messages", {"text": "Hello"}, **key("send-1"))
    assert resent.body == sent.body
    assert Message.objects.filter(conversation__public_id=first.body["id"]).count() == 2  # one turn


def test_the_same_body_in_another_key_order_or_spacing_is_the_same_request(api, agent):
    path = f"/agents/{agent.public_id}/conversations"
    first = api.call("POST", path, raw=b'{"endUserId": "u_order", "memory": false}', **key("k-order"))
    again = api.call("POST", path, raw=b'{"memory":false,"endUserId":"u_order"}', **key("k-order"))
    assert again.body == first.body and again.headers["idempotent-replayed"] == "true"


def test_a_key_reused_with_another_body_path_or_method_is_refused_with_422(api, agent):
    path = f"/agents/{agent.public_id}/conversations"
    api.post(path, {"endUserId": "u_a"}, **key("k-reuse"))
    other_body = api.post(path, {"endUserId": "u_b"}, **key("k-reuse"))
    assert (other_body.status, other_body.code) == (422, "idempotency_key_reused")
    assert other_body.body["error"]["field"] == "Idempotency-Key"
    other_path = api.post(f"/agents/{agent.public_id}/instruction-check", {"instructions": "x"}, **key("k-reuse"))
    assert other_path.code == "idempotency_key_reused"
    other_method = api.put(f"/agents/{agent.public_id}/end-users/u_a/memory", {"text": "x"}, **key("k-reuse"))
    assert other_method.code == "idempotency_key_reused"
    assert not Conversation.objects.filter(end_user__external_id="u_b").exists()
    assert Memory.objects.filter(end_user__external_id="u_a", text="x").count() == 0


def test_another_teams_same_key_is_another_key(api, agent, other_team):
    from agents.services import agent_create

    other_team, _ = other_team
    theirs = agent_create(team=other_team, name="Theirs", config={"memorySettings": {"on": True}})
    other_api = api_in_process(other_team)
    ours = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_x"}, **key("shared-key"))
    their = other_api.post(f"/agents/{theirs.public_id}/conversations", {"endUserId": "u_x"}, **key("shared-key"))
    assert ours.status == their.status == 201 and ours.body["id"] != their.body["id"]
    assert "idempotent-replayed" not in their.headers
    # Their key never answers our request either.
    ours_again = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_x"}, **key("shared-key"))
    assert ours_again.body == ours.body
    assert IdempotencyKey.objects.filter(key="shared-key").count() == 2


def test_a_key_older_than_24_hours_is_a_new_key_and_the_schedule_deletes_it(api, agent):
    path = f"/agents/{agent.public_id}/conversations"
    first = api.post(path, {"endUserId": "u_old"}, **key("k-old"))
    IdempotencyKey.objects.filter(key="k-old").update(created_at=timezone.now() - timedelta(hours=24, seconds=1))
    later = api.post(path, {"endUserId": "u_old"}, **key("k-old"))
    assert later.status == 201 and later.body["id"] != first.body["id"]
    assert "idempotent-replayed" not in later.headers
    # A different body is fine too, once the key has expired.
    IdempotencyKey.objects.filter(key="k-old").update(created_at=timezone.now() - timedelta(days=2))
    assert api.post(path, {"endUserId": "u_other"}, **key("k-old")).status == 201

    api.post(path, {"endUserId": "u_new"}, **key("k-new"))
    IdempotencyKey.objects.filter(key="k-old").update(created_at=timezone.now() - timedelta(days=2))
    assert tasks.idempotency_keys_expire() == 1
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["k-new"]
    spec = SCHEDULES["idempotency-keys-expire"]
    assert spec["func"] == "surfaces.tasks.idempotency_keys_expire" and spec["schedule_type"] == "H"


def test_a_request_still_in_flight_answers_409_with_retry_after(api, agent, team):
    path = f"/agents/{agent.public_id}/conversations"
    fingerprint = idempotency.request_fingerprint(
        method="POST", route="ConversationStartApi", kwargs={"agent_id": agent.public_id}, body=b'{"endUserId":"u_f"}'
    )
    IdempotencyKey.objects.create(team=team, key="k-busy", fingerprint=fingerprint)
    busy = api.post(path, {"endUserId": "u_f"}, **key("k-busy"))
    assert (busy.status, busy.code, busy.headers["retry-after"]) == (409, "idempotency_key_in_use", "1")
    assert not Conversation.objects.filter(end_user__external_id="u_f").exists()
    # A claim never answered for longer than the takeover time is a dead process's: taken over.
    IdempotencyKey.objects.filter(key="k-busy").update(created_at=timezone.now() - timedelta(minutes=6))
    assert api.post(path, {"endUserId": "u_f"}, **key("k-busy")).status == 201
    assert IdempotencyKey.objects.get(key="k-busy").status == 201


def test_a_failed_request_gives_its_key_back(api, agent, monkeypatch):
    from surfaces.api.agents import ConversationStartApi

    def boom(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(ConversationStartApi, "post", boom)
    path = f"/agents/{agent.public_id}/conversations"
    with pytest.raises(RuntimeError):
        api.post(path, {"endUserId": "u_boom"}, **key("k-boom"))
    assert not IdempotencyKey.objects.filter(key="k-boom").exists()
    monkeypatch.undo()
    assert api.post(path, {"endUserId": "u_boom"}, **key("k-boom")).status == 201


def test_a_4xx_answer_is_kept_and_replayed(api, agent):
    conversation = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_4xx"}).body
    path = f"/conversations/{conversation['id']}/messages"
    refused = api.post(path, {"text": ""}, **key("k-4xx"))
    assert refused.status == 400
    again = api.post(path, {"text": ""}, **key("k-4xx"))
    assert (again.status, again.body, again.headers["idempotent-replayed"]) == (400, refused.body, "true")
    assert IdempotencyKey.objects.get(key="k-4xx").status == 400


def test_a_5xx_answer_releases_the_key(api, agent, monkeypatch):
    from agents.errors import AppError

    calls = []

    def failing_view(self, request, *args, **kwargs):
        calls.append(1)
        raise AppError("model_timeout", "The model did not answer in time.", status=502)

    from surfaces.api.jobs import InstructionCheckApi

    monkeypatch.setattr(InstructionCheckApi, "post", failing_view)
    path = f"/agents/{agent.public_id}/instruction-check"
    assert api.post(path, {"instructions": "Keep it."}, **key("k-502")).status == 502
    assert not IdempotencyKey.objects.filter(key="k-502").exists()
    assert api.post(path, {"instructions": "Keep it."}, **key("k-502")).status == 502
    assert len(calls) == 2  # each try ran: nothing was kept to replay


def test_every_write_method_takes_a_key_put_patch_delete(api, agent):
    memory_path = f"/agents/{agent.public_id}/end-users/u_w/memory"
    set_once = api.put(memory_path, {"text": "Prefers email over phone."}, **key("k-put"))
    etag = set_once.headers["etag"]
    # A retry of a compare-and-set that went through answers its success, not 412 memory_changed.
    made = api.put(memory_path, {"text": "Speaks Hindi."}, headers={"Idempotency-Key": "k-cas", "If-Match": etag})
    again = api.put(memory_path, {"text": "Speaks Hindi."}, headers={"Idempotency-Key": "k-cas", "If-Match": etag})
    assert made.status == again.status == 200 and again.headers["etag"] == made.headers["etag"]
    patched = api.patch(f"/agents/{agent.public_id}", {"instructions": "Be brief."}, **key("k-patch"))
    repatched = api.patch(f"/agents/{agent.public_id}", {"instructions": "Be brief."}, **key("k-patch"))
    assert patched.body["version"] == repatched.body["version"] == 2  # one version published, not two
    api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_del"})
    erased = api.delete(f"/agents/{agent.public_id}/end-users/u_del", **key("k-erase"))
    reerased = api.delete(f"/agents/{agent.public_id}/end-users/u_del", **key("k-erase"))
    assert erased.status == reerased.status == 200 and reerased.body == erased.body  # not a 404 the second time


def test_writes_without_a_key_and_reads_are_untouched(api, agent):
    path = f"/agents/{agent.public_id}/conversations"
    a = api.post(path, {"endUserId": "u_nokey"})
    b = api.post(path, {"endUserId": "u_nokey"})
    assert a.body["id"] != b.body["id"]
    read = api.get(f"/agents/{agent.public_id}", **key("k-read"))
    assert read.status == 200 and "idempotent-replayed" not in read.headers
    assert not IdempotencyKey.objects.exists()


@pytest.mark.parametrize("value", ["", "with space", "x" * 256, "naïve"])
def test_a_malformed_key_is_refused_before_anything_is_done(api, agent, value):
    answer = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_bad"}, **key(value))
    assert (answer.status, answer.code, answer.body["error"]["field"]) == (400, "invalid_request", "Idempotency-Key")
    assert not Conversation.objects.filter(end_user__external_id="u_bad").exists()


def test_a_refused_caller_claims_nothing(api, agent):
    from tests.api_helpers import InProcessApi

    nobody = InProcessApi("ank_wrong")
    assert nobody.post(f"/agents/{agent.public_id}/conversations", {}, **key("k-auth")).status == 401
    query = api.post(f"/agents/{agent.public_id}/conversations?x=1", {"endUserId": "u_q"}, **key("k-query"))
    assert query.status == 400
    assert not IdempotencyKey.objects.exists()


def test_erasing_the_person_or_deleting_the_agent_takes_their_kept_answers(api, agent, team):
    memory_path = f"/agents/{agent.public_id}/end-users/u_kept/memory"
    api.put(memory_path, {"text": "Works from the Pune office."}, **key("k-kept-1"))
    started = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_kept"}, **key("k-kept-2"))
    api.post(f"/conversations/{started.body['id']}/messages", {"text": "Hi"}, **key("k-kept-3"))
    kept = IdempotencyKey.objects.filter(key__startswith="k-kept")
    assert kept.count() == 3 and not kept.filter(end_user=None).exists()
    assert api.delete(f"/agents/{agent.public_id}/end-users/u_kept").status == 200
    assert not kept.exists()

    api.put(memory_path, {"text": "Works from the Pune office."}, **key("k-agent"))
    api.post("/webhooks", {"url": "https://example.com/h", "events": ["memory.updated"]}, **key("k-team"))
    Agent.objects.filter(pk=agent.pk).delete()
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["k-team"]


def test_deleting_or_stopping_a_memory_drops_the_answers_that_showed_it(api, agent):
    path = f"/agents/{agent.public_id}/end-users/u_gone/memory"
    api.put(path, {"text": "Works from the Pune office."}, **key("k-gone-1"))
    end_user = Memory.objects.get(end_user__external_id="u_gone").end_user
    memory_delete(end_user=end_user)
    assert not IdempotencyKey.objects.filter(key="k-gone-1").exists()
    memory_set(end_user=end_user, text="Speaks Hindi.")
    api.put(path, {"text": "Speaks Hindi."}, **key("k-gone-2"))
    stopped = api.post(f"{path}/stop", {}, **key("k-gone-3"))
    assert stopped.status == 200
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["k-gone-3"]  # the stop's own answer
    assert "Hindi" not in bytes(IdempotencyKey.objects.get(key="k-gone-3").body).decode()


def test_a_memory_expired_by_retention_drops_the_answers_that_showed_it(api, agent):
    path = f"/agents/{agent.public_id}/end-users/u_old/memory"
    api.put(path, {"text": "Works from the Pune office."}, **key("k-old-1"))
    assert IdempotencyKey.objects.filter(key="k-old-1").exists()
    assert memory_retention_sweep(now=timezone.now() + timedelta(days=400)) == {"expired": 1}
    assert not IdempotencyKey.objects.filter(key="k-old-1").exists()


@pytest.mark.django_db(transaction=True)
def test_two_requests_with_one_key_at_once_do_the_work_once(team, agent):
    """Two threads, one key: one does the work; the other is told it is in flight, or replays."""
    if connection.vendor == "sqlite":
        pytest.skip("SQLite serialises writers: the race needs PostgreSQL's concurrency")
    api = api_in_process(team)
    path = f"/agents/{agent.public_id}/conversations"
    answers = []
    barrier = threading.Barrier(2)

    def send():
        barrier.wait()
        try:
            answers.append(api.post(path, {"endUserId": "u_race"}, **key("k-race")))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(a.status for a in answers) in ([201, 201], [201, 409])
    assert Conversation.objects.filter(end_user__external_id="u_race").count() == 1


def test_the_schema_documents_the_header_and_the_codes_on_every_write():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    writes = 0
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            headers = [p["name"] for p in operation.get("parameters", []) if p["in"] == "header"]
            if method in ("post", "put", "patch", "delete"):
                writes += 1
                assert "Idempotency-Key" in headers, (method, path)
                assert "idempotency_key_in_use" in operation["responses"]["409"]["description"]
                assert "idempotency_key_reused" in operation["responses"]["422"]["description"]
            else:
                assert "Idempotency-Key" not in headers, (method, path)
    assert writes >= 20
    from surfaces.http.base import api_description

    description = api_description()  # the schema's introduction, as /api/schema/ serves it
    assert "| `idempotency_key_reused` | 422 |" in description and "| `idempotency_key_in_use` | 409 |" in description
    assert "Idempotency-Key" in description
