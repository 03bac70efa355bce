"""/metrics (issue 13): Prometheus text behind a token or the private network, gauges from the
database, counters shared by every process, and no memory text, id or name in any of it."""

import json
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from memory.writer.sweep import memory_sweep
from ops import counters
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start
from tests.fake_openai import chat_json


@pytest.fixture(autouse=True)
def fresh_counters():
    counters.reset()
    yield
    counters.reset()


def scrape(client=None, **headers):
    response = (client or Client()).get("/metrics", **headers)
    assert response.status_code == 200, response.status_code
    assert response["Content-Type"].startswith("text/plain; version=")
    return response.content.decode()


def samples(text):
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_without_a_token_only_direct_private_requests_see_metrics(db):
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="8.8.8.8").get("/metrics").status_code == 404
    # Through the proxy (X-Forwarded-For), even from the proxy's private address: refused.
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics", HTTP_X_FORWARDED_FOR="8.8.8.8").status_code == 404


@pytest.mark.parametrize(
    "header, value",
    [
        ("HTTP_FORWARDED", "for=8.8.8.8;proto=https"),
        ("HTTP_FORWARDED", 'for="[2001:db8::1]"'),
        ("HTTP_X_FORWARDED_FOR", "10.0.0.1"),
        ("HTTP_X_FORWARDED_HOST", "example.com"),
        ("HTTP_X_FORWARDED_PROTO", "https"),
        ("HTTP_X_REAL_IP", "8.8.8.8"),
        ("HTTP_VIA", "1.1 proxy"),
        ("HTTP_TRUE_CLIENT_IP", "8.8.8.8"),
        ("HTTP_X_FORWARDED_FOR", ""),
    ],
)
def test_any_forwarding_header_makes_a_request_not_direct(db, header, value):
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics", **{header: value}).status_code == 404


def test_with_a_token_the_bearer_token_is_required(db, settings):
    settings.METRICS_TOKEN = "metrics-token-for-tests"
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 401
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    ok = Client(REMOTE_ADDR="8.8.8.8").get("/metrics", HTTP_AUTHORIZATION="Bearer metrics-token-for-tests")
    assert ok.status_code == 200


def test_metrics_count_chats_runs_drops_and_model_calls_without_words_or_ids(agent, openai_engine):
    start = timezone.now() - timedelta(minutes=30)
    secret_words = "Lives at 14 Juniper Lane and prefers email"
    for n in range(2):
        conversation = chat_start.conversation_start(agent=agent, external_id=f"person-{n}@example.com", now=start)
        chat_record.message_record(conversation=conversation, kind="user", text=secret_words, now=start)
    calls = []

    def answer(body):  # first run: one sourced line and one citing a message it was not given; then the model is down
        calls.append(1)
        if len(calls) > 1:
            return {"status": 500, "body": {"error": {"message": "down"}}}
        first = json.loads(body["messages"][-1]["content"])["messages"][0]["id"]
        return chat_json(
            {
                "operations": [
                    {"op": "add", "line": None, "text": "Prefers email.", "sources": [first]},
                    {"op": "add", "line": None, "text": "Unsourced line.", "sources": ["m999999"]},
                ]
            }
        )

    openai_engine.default = answer
    memory_sweep(run_inline=True)
    metrics = scrape(Client(REMOTE_ADDR="127.0.0.1"))
    values = samples(metrics)

    assert values[("agentnava_chat_starts_total", (("memory", "yes"),))] == 2
    assert values[("agentnava_memory_runs_total", (("kind", "quiet"), ("status", "succeeded")))] == 1
    assert values[("agentnava_memory_runs_total", (("kind", "quiet"), ("status", "failed")))] == 1
    assert values[("agentnava_guard_drops_total", (("kind", "quiet"), ("reason", "unsourced")))] >= 1
    assert values[("agentnava_model_calls_total", (("outcome", "ok"), ("task", "memory_operations")))] == 1
    assert (
        sum(
            v
            for (name, labels), v in values.items()
            if name == "agentnava_model_calls_total" and ("outcome", "ok") not in labels
        )
        == 1
    )
    assert values[("agentnava_model_latency_seconds_count", (("task", "memory_operations"),))] == 2
    assert values[("agentnava_due_backlog", ())] == 0
    assert ("agentnava_task_health", ()) in values

    for forbidden in ("Juniper", "email", "person-", "@example.com", agent.name, agent.team.name, agent.public_id):
        assert forbidden not in metrics.replace("agentnava_", ""), forbidden
    for label_value in re.findall(r'="([^"]*)"', metrics):
        assert re.fullmatch(r"[a-z0-9_.:+-]*|\+Inf", label_value), label_value


def test_throttled_requests_are_counted_by_surface(db, client):
    counters.add("throttled", surface="api")
    counters.add("throttled", surface="api")
    values = samples(scrape(Client(REMOTE_ADDR="127.0.0.1")))
    assert values[("agentnava_throttled_requests_total", (("surface", "api"),))] == 2


def test_counter_labels_are_codes_only():
    assert counters.field("guard_drops", reason="Lives at 14 Juniper Lane") == "guard_drops|reason=other"
    assert counters.field("guard_drops", reason="secret") == "guard_drops|reason=secret"


def test_an_unusable_model_answer_counts_as_that_error(db, openai_engine):
    from agents.engines import EngineError, get_engine
    from tests.fake_openai import chat_text

    openai_engine.script = [chat_text("not JSON at all"), chat_text("Hello there.")]
    with pytest.raises(EngineError):
        get_engine().structured(task="memory_operations", system="s", payload={}, schema={"type": "object"})
    get_engine().reply(task="chat_reply", system="s", messages=[{"role": "user", "content": "hi"}])
    values = samples(scrape(Client(REMOTE_ADDR="127.0.0.1")))
    assert values[("agentnava_model_calls_total", (("outcome", "model_malformed"), ("task", "memory_operations")))] == 1
    assert values[("agentnava_model_calls_total", (("outcome", "ok"), ("task", "chat_reply")))] == 1
    assert values[("agentnava_model_latency_seconds_count", (("task", "chat_reply"),))] == 1
