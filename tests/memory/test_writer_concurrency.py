"""The writer's batch with a model (issue 29): the people's model calls are in flight together, at
most MODEL_CONCURRENCY at once, and a call that fails or is too slow fails only its own person (a
failed run with its backoff); the rest commit together. Real HTTP to the loopback model server,
which counts the calls in flight; nothing here is timed."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from agents import services as agent_services
from agents.models import Conversation, EndUser
from memory.models import Memory, MemoryRun
from memory.writer import batch as writer_batch
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start
from tests.fake_openai import chat_json

CONFIG = {"memorySettings": {"on": True, "quietMinutes": 5}}
T0 = (timezone.now() - timedelta(days=1)).replace(microsecond=0)


def people(team, user, n):
    agent = agent_services.agent_create(team=team, name="Concurrent", user=user, config=CONFIG)
    ids = []
    for i in range(n):
        conversation = chat_start.conversation_start(agent=agent, external_id=f"c{i}", now=T0)
        chat_record.message_record(
            conversation=conversation,
            kind="user",
            text=f"Please email me, I prefer email over phone. I am customer {i}.",
            now=T0 + timedelta(seconds=10),
        )
        ids.append(conversation.end_user_id)
    return ids


def writer_model(*, failing=(), slow=()):
    """The model as the writer: one line citing the first message; customer N in `failing` gets a
    500, in `slow` an answer after the client's timeout."""

    def answer(body):
        payload = json.loads(body["messages"][-1]["content"])
        said = payload["messages"][0]
        ops = [{"op": "add", "line": None, "text": "Prefers email over phone.", "sources": [said["id"]]}]
        customer = int(said["text"].rsplit(" ", 1)[1].rstrip("."))
        if customer in failing:
            return {"status": 500, "body": {"error": {"message": "boom"}}}
        return {**chat_json({"operations": ops}), "delay": 3 if customer in slow else 0}

    return answer


@pytest.mark.django_db
def test_a_batchs_calls_are_in_flight_together_within_the_cap(team, user, openai_engine, settings):
    settings.MODEL_CONCURRENCY = 3
    ids = people(team, user, 6)
    openai_engine.default = writer_model()
    openai_engine.hold_until, openai_engine.hold_seconds = 4, 1  # four would gather if the cap let them
    rows = writer_batch.run_quiet_windows(end_user_ids=ids, now=T0 + timedelta(hours=1))
    assert len(openai_engine.requests) == 6
    assert openai_engine.most_in_flight == 3  # overlapping, never past MODEL_CONCURRENCY
    assert sorted(r.status for r in rows) == ["succeeded"] * 6
    assert set(Memory.objects.filter(end_user_id__in=ids).values_list("text", flat=True)) == {
        "Prefers email over phone."
    }


@pytest.mark.django_db
def test_a_failing_or_slow_call_fails_only_its_own_person(team, user, openai_engine, settings):
    settings.MODEL_CONCURRENCY = 6
    ids = people(team, user, 6)
    openai_engine.default = writer_model(failing={1}, slow={4})  # the client's timeout is 2 s (conftest)
    openai_engine.hold_until = 6  # all six in flight together
    now = T0 + timedelta(hours=1)
    rows = writer_batch.run_quiet_windows(end_user_ids=ids, now=now)
    assert openai_engine.most_in_flight == 6
    by_person = {r.memory.end_user_id: r for r in rows}
    assert by_person[ids[1]].status == by_person[ids[4]].status == MemoryRun.Status.FAILED
    assert (by_person[ids[1]].error, by_person[ids[4]].error) == ("model_error", "model_timeout")
    for i in (1, 4):  # nothing kept or read, and tried again after the first backoff
        memory = Memory.objects.get(end_user_id=ids[i])
        assert (memory.text, memory.read_up_to, memory.last_failure["attempts"]) == ("", None, 1)
        assert Conversation.objects.get(end_user_id=ids[i]).memory_due_at == now + timedelta(minutes=1)
    for i in (0, 2, 3, 5):
        assert by_person[ids[i]].status == MemoryRun.Status.SUCCEEDED
        memory = Memory.objects.get(end_user_id=ids[i])
        assert memory.text == "Prefers email over phone." and memory.last_failure is None
        assert Conversation.objects.get(end_user_id=ids[i]).memory_due_at is None


@pytest.mark.django_db
def test_apply_and_try_with_a_model_keep_their_calls_in_flight_together(agent, user, openai_engine, settings):
    """Apply reviews a wave of MODEL_CONCURRENCY memories at once, Try its people at once: the same
    seam (`engines.concurrently`) and cap as the writer's batch."""
    from agents import services as agents_services
    from memory.store import services as memory_services
    from memory.tools import apply, trial

    settings.MODEL_CONCURRENCY = 4
    for i in range(8):
        end_user = agents_services.end_user_get_or_create(agent=agent, external_id=f"a{i}")
        memory_services.memory_set(end_user=end_user, text="Works from the Pune office.\nPrefers email over phone.")
    openai_engine.default = chat_json({"operations": [{"op": "remove", "line": 1, "text": None, "sources": []}]})
    openai_engine.hold_until, openai_engine.hold_seconds = 5, 1  # five would gather if the cap let them
    job = apply.apply_start(agent=agent, user=user)  # the test settings run its steps inline
    job.refresh_from_db()
    assert (job.status, job.reviewed, job.changed, job.failed) == ("done", 8, 8, 0)
    assert openai_engine.most_in_flight == 4
    assert set(Memory.objects.filter(agent=agent).values_list("text", flat=True)) == {"Prefers email over phone."}

    writes = writer_model()
    openai_engine.default = lambda body: (
        writes(body) if json.loads(body["messages"][-1]["content"])["messages"] else chat_json({"operations": []})
    )
    openai_engine.most_in_flight, openai_engine.hold_until = 0, 3
    ids = people(agent.team, user, 3)  # three people with a chat on another agent
    tried = EndUser.objects.filter(pk__in=ids).select_related("agent")
    done = trial.trial_run(agent=tried[0].agent, config=CONFIG, end_users=list(tried))
    assert [(p.error, p.after) for p in done.people] == [("", ["Prefers email over phone."])] * 3
    assert openai_engine.most_in_flight == 3
