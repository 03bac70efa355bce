"""The OpenAI-compatible engine over real HTTP against a loopback server; the offline engine."""

import pytest

from agents.engines import EngineError, OfflineEngine, OpenAIEngine, get_engine
from tests.fake_openai import chat_body, chat_json, chat_text

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["answer"],
    "properties": {"answer": {"type": "string"}},
}


def test_the_offline_engine_is_the_default_without_a_key(settings):
    settings.AGENTNAVA_ENGINE = "offline"
    assert isinstance(get_engine(), OfflineEngine)


def test_structured_request_carries_the_model_and_the_json_schema(openai_engine, settings):
    settings.AGENTNAVA_MODEL = "llama-3.1-8b"
    openai_engine.script.append(chat_json({"answer": "yes"}))
    engine = get_engine()
    assert isinstance(engine, OpenAIEngine)
    result = engine.structured(task="probe", system="Be brief.", payload={"q": "ok?"}, schema=SCHEMA)
    assert result.data == {"answer": "yes"}
    assert (result.input_tokens, result.output_tokens) == (11, 7)
    sent = openai_engine.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["authorization"] == "Bearer sk-test-not-real"
    body = sent["json"]
    assert body["model"] == "llama-3.1-8b"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert body["response_format"]["json_schema"]["strict"] is True
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}


def test_a_reply_is_plain_text(openai_engine):
    openai_engine.script.append(chat_text("  Hello there.  "))
    result = get_engine().reply(task="chat_reply", system="s", messages=[{"role": "user", "content": "hi"}])
    assert result.data == "Hello there."
    assert openai_engine.requests[0]["json"]["messages"][-1] == {"role": "user", "content": "hi"}


def test_a_slow_server_times_out_with_a_clear_error(openai_engine, settings):
    settings.OPENAI_TIMEOUT_SECONDS = 0.5
    openai_engine.script.append({**chat_json({"answer": "late"}), "delay": 2})
    with pytest.raises(EngineError) as info:
        get_engine().structured(task="probe", system="s", payload={}, schema=SCHEMA)
    assert info.value.code == "model_timeout"


def test_a_429_is_retried_then_succeeds(openai_engine, settings):
    settings.OPENAI_MAX_RETRIES = 1
    openai_engine.script.append(
        {
            "status": 429,
            "body": {"error": {"message": "slow down", "type": "rate_limit"}},
            "headers": {"retry-after-ms": "50"},
        }
    )
    openai_engine.script.append(chat_json({"answer": "after retry"}))
    result = get_engine().structured(task="probe", system="s", payload={}, schema=SCHEMA)
    assert result.data == {"answer": "after retry"}
    assert len(openai_engine.requests) == 2


def test_a_429_without_retries_left_is_a_rate_limit_error(openai_engine):
    openai_engine.script.append({"status": 429, "body": {"error": {"message": "slow down"}}})
    with pytest.raises(EngineError) as info:
        get_engine().structured(task="probe", system="s", payload={}, schema=SCHEMA)
    assert info.value.code == "model_rate_limited"


@pytest.mark.parametrize(
    "answer",
    [
        {"status": 200, "body": chat_body("this is not json")},
        {"status": 200, "body": chat_body("[1, 2]")},
        {"status": 200, "body": {"id": "x", "choices": []}},
        {"status": 200, "body": "<html>oops</html>"},
    ],
)
def test_a_malformed_answer_is_a_clear_error(openai_engine, answer):
    openai_engine.script.append(answer)
    with pytest.raises(EngineError) as info:
        get_engine().structured(task="probe", system="s", payload={}, schema=SCHEMA)
    assert info.value.code.startswith("model_")
    assert info.value.message


def test_an_unreachable_server_is_a_clear_error(settings):
    settings.AGENTNAVA_ENGINE = "openai"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.OPENAI_MAX_RETRIES = 0
    with pytest.raises(EngineError) as info:
        get_engine().reply(task="chat_reply", system="s", messages=[])
    assert info.value.code == "model_unreachable"


def test_the_offline_engine_answers_from_the_note_in_its_system_prompt(db):
    system = "You help.\n<memory>\nPrefers email over phone.\n</memory>"
    text = (
        OfflineEngine()
        .reply(task="chat_reply", system=system, messages=[{"role": "user", "content": "Hi, can I get my receipt?"}])
        .data
    )
    assert "Hi again" in text and "email you the receipt" in text
    fresh = (
        OfflineEngine()
        .reply(
            task="chat_reply", system="You help.", messages=[{"role": "user", "content": "Hi, can I get my receipt?"}]
        )
        .data
    )
    assert "Hi again" not in fresh


def test_a_structured_answer_over_the_cap_is_refused_before_parsing(openai_engine, settings):
    """The writer's and the Builder's path: a JSON answer over MODEL_ANSWER_MAX_BYTES never reaches
    json.loads; one under it still works."""
    settings.MODEL_ANSWER_MAX_BYTES = 4096
    openai_engine.script.append({**chat_json({"answer": "x" * 10_000}), "no_length": True})
    with pytest.raises(EngineError) as info:
        get_engine().structured(task="t", system="s", payload={}, schema=SCHEMA)
    assert info.value.code == "model_too_large"
    openai_engine.script.append(chat_json({"answer": "short"}))
    assert get_engine().structured(task="t", system="s", payload={}, schema=SCHEMA).data == {"answer": "short"}
