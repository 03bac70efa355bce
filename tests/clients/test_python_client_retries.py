"""When the Python client tries a request again, and when it must not: against httpx's MockTransport,
so every answer (a dropped connection, 429 with Retry-After, 5xx) is the test's to choose and no
wait is real. The live server's side of a retry (a repeat changes nothing) is in
test_python_client.py and tests/surfaces/test_idempotency.py."""

import asyncio
import email.utils
import json
import time

import httpx
import pytest

import tests.clients.conftest  # noqa: F401 - puts clients/python on the path

agentnava = pytest.importorskip("agentnava")
from agentnava import (  # noqa: E402
    AgentNava,
    AgentNavaError,
    APIConnectionError,
    AsyncAgentNava,
    Conflict,
    IdempotencyKeyInUse,
    IdempotencyKeyReused,
    MemoryChanged,
    MemoryOff,
    MemoryRefused,
    NotFound,
    RateLimited,
    ServerError,
)

AGENT = {
    "id": "agt_1",
    "name": "Support",
    "version": 1,
    "publishedAt": "2026-11-03T10:00:00.123456Z",
    "instructions": "",
    "guardrails": "",
    "actions": [],
    "memorySettings": {
        "on": True,
        "instructions": "",
        "keepForDays": 90,
        "quietMinutes": 30,
        "showSwitch": True,
        "askFirst": False,
        "privacyUrl": "",
        "notice": None,
    },
}
STARTED = {
    "id": "conv_1",
    "agentId": "agt_1",
    "endUserId": "u_1",
    "usesMemory": True,
    "memoryOffReason": None,
    "version": 1,
    "project": None,
    "startedAt": "2026-11-03T10:00:00Z",
}


class Script:
    """Answers requests in turn from a list: a response, or an exception to raise (no answer)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    @property
    def keys(self) -> list[str | None]:
        return [request.headers.get("Idempotency-Key") for request in self.requests]


def error(status: int, code: str, headers=None) -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": code, "message": code}}, headers=headers)


def dropped() -> httpx.RemoteProtocolError:
    return httpx.RemoteProtocolError("Server disconnected without sending a response.")


@pytest.fixture
def waits(monkeypatch):
    """The client's waits between tries, recorded instead of slept."""
    slept: list[float] = []
    monkeypatch.setattr("agentnava.client.time.sleep", slept.append)
    return slept


def client_for(script: Script, **options) -> AgentNava:
    http = httpx.Client(transport=httpx.MockTransport(script))
    return AgentNava(api_key="ank_test", base_url="http://agentnava.test", http_client=http, **options)


def test_a_get_is_tried_again_after_5xx_with_a_growing_backoff(waits):
    script = Script(error(503, "error"), error(502, "model_timeout"), httpx.Response(200, json=AGENT))
    assert client_for(script).agent("agt_1").get().id == "agt_1"
    assert len(script.requests) == 3
    assert 0.375 <= waits[0] <= 0.5 and 0.75 <= waits[1] <= 1.0


def test_a_get_is_tried_again_after_a_dropped_connection(waits):
    script = Script(dropped(), httpx.ConnectError("refused"), httpx.Response(200, json=AGENT))
    assert client_for(script).agent("agt_1").get().name == "Support"
    assert len(script.requests) == 3 and len(waits) == 2


def test_429_waits_the_retry_after_seconds(waits):
    script = Script(error(429, "rate_limited", {"Retry-After": "3"}), httpx.Response(200, json=AGENT))
    client_for(script).agent("agt_1").get()
    assert waits == [3.0]


def test_a_retry_after_given_as_an_http_date_is_honoured(waits):
    later = email.utils.formatdate(time.time() + 5, usegmt=True)
    script = Script(error(503, "error", {"Retry-After": later}), httpx.Response(200, json=AGENT))
    client_for(script).agent("agt_1").get()
    assert 3.5 <= waits[0] <= 5.0


def test_a_retry_after_longer_than_a_minute_is_not_waited_out(waits):
    script = Script(error(429, "rate_limited", {"Retry-After": "120"}))
    with pytest.raises(RateLimited) as limited:
        client_for(script).agent("agt_1").get()
    assert (limited.value.status, limited.value.retry_after, waits) == (429, 120.0, [])


def test_it_gives_up_after_max_retries_with_the_last_answers_error(waits):
    script = Script(*(error(500, "error") for _ in range(4)))
    with pytest.raises(ServerError) as failed:
        client_for(script, max_retries=3).agent("agt_1").get()
    assert failed.value.status == 500 and len(script.requests) == 4
    script = Script(error(500, "error"))
    with pytest.raises(ServerError):
        client_for(script, max_retries=0).agent("agt_1").get()
    assert len(script.requests) == 1


def test_no_answer_on_every_try_is_an_api_connection_error(waits):
    script = Script(*(httpx.ReadTimeout("slow") for _ in range(3)))
    with pytest.raises(APIConnectionError) as failed:
        client_for(script).agent("agt_1").get()
    assert (failed.value.code, failed.value.status) == ("connection_error", 0)
    assert isinstance(failed.value, AgentNavaError) and isinstance(failed.value.__cause__, httpx.ReadTimeout)


def test_a_post_is_tried_again_with_the_same_idempotency_key(waits):
    script = Script(dropped(), error(503, "error"), httpx.Response(201, json=STARTED))
    conversation = client_for(script).agent("agt_1").start(end_user_id="u_1")
    assert conversation.id == "conv_1"
    keys = script.keys
    assert len(keys) == 3 and keys[0] and len(set(keys)) == 1
    assert [json.loads(request.content) for request in script.requests] == [{"endUserId": "u_1"}] * 3


def test_each_call_makes_its_own_key_and_a_key_given_is_sent(waits):
    script = Script(*(httpx.Response(201, json=STARTED) for _ in range(3)))
    agent = client_for(script).agent("agt_1")
    agent.start(end_user_id="u_1")
    agent.start(end_user_id="u_1")
    agent.start(end_user_id="u_1", idempotency_key="order-42-start")
    first, second, given = script.keys
    assert first != second and given == "order-42-start"


def test_every_write_carries_a_key_and_a_read_none(waits):
    memory = {"endUserId": "u_1", "text": "", "stopped": False, "conversations": 0}
    script = Script(
        httpx.Response(200, json=memory),
        httpx.Response(200, json=memory),
        httpx.Response(204),
        httpx.Response(200, json=AGENT),
    )
    agent = client_for(script).agent("agt_1")
    agent.end_user("u_1").memory.get()
    agent.end_user("u_1").memory.set("Likes tea.")
    agent.end_user("u_1").memory.delete()
    agent.update(instructions="Be brief.")
    assert [request.method for request in script.requests] == ["GET", "PUT", "DELETE", "PATCH"]
    assert script.keys[0] is None and all(script.keys[1:])


def test_without_idempotency_keys_a_write_is_never_sent_twice(waits):
    script = Script(dropped())
    with pytest.raises(APIConnectionError):
        client_for(script, idempotency_keys=False).agent("agt_1").start(end_user_id="u_1")
    script = Script(error(503, "error"))
    with pytest.raises(ServerError):
        client_for(script, idempotency_keys=False).agent("agt_1").update(instructions="x")
    assert len(script.requests) == 1 and script.keys == [None] and waits == []
    # A key given to the call still makes it safe to send again.
    script = Script(dropped(), httpx.Response(201, json=STARTED))
    client_for(script, idempotency_keys=False).agent("agt_1").start(end_user_id="u_1", idempotency_key="k1")
    assert script.keys == ["k1", "k1"]


def test_a_key_still_in_use_is_waited_out_and_other_409s_are_answers(waits):
    script = Script(error(409, "idempotency_key_in_use", {"Retry-After": "1"}), httpx.Response(201, json=STARTED))
    assert client_for(script).agent("agt_1").start(end_user_id="u_1").id == "conv_1"
    assert waits == [1.0]
    script = Script(error(409, "memory_off"))
    with pytest.raises(MemoryOff):
        client_for(script).agent("agt_1").end_user("u_1").memory.set("x")
    assert len(script.requests) == 1


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (400, "memory_refused", MemoryRefused),
        (404, "agent_not_found", NotFound),
        (404, "webhook_not_found", NotFound),
        (409, "job_running", Conflict),
        (409, "idempotency_key_in_use", IdempotencyKeyInUse),
        (412, "memory_changed", MemoryChanged),
        (422, "idempotency_key_reused", IdempotencyKeyReused),
        (429, "rate_limited", RateLimited),
        (502, "model_unreachable", ServerError),
        (418, "teapot", AgentNavaError),
    ],
)
def test_each_code_raises_its_class(status, code, cls):
    script = Script(httpx.Response(status, json={"error": {"code": code, "message": "No.", "field": "text"}}))
    with pytest.raises(cls) as raised:
        client_for(script, max_retries=0).request("GET", "/agents")
    assert (raised.value.code, raised.value.status, raised.value.field, str(raised.value)) == (
        code,
        status,
        "text",
        "No.",
    )


def test_an_answer_that_is_not_the_apis_json_still_raises_with_its_status():
    script = Script(httpx.Response(400, text="<html>Bad request</html>"))
    with pytest.raises(AgentNavaError) as raised:
        client_for(script).request("GET", "/agents")
    assert (raised.value.code, raised.value.status) == ("http_400", 400)


@pytest.mark.parametrize(
    "base_url",
    [
        "http://agentnava.test",
        "http://agentnava.test/",
        "http://agentnava.test/api/v1",
        "http://agentnava.test/api/v1/",
    ],
)
def test_the_base_url_may_name_the_api_or_not(base_url):
    script = Script(httpx.Response(200, json=AGENT))
    http = httpx.Client(transport=httpx.MockTransport(script))
    AgentNava(api_key="ank_test", base_url=base_url, http_client=http).agent("agt/1").get()
    assert str(script.requests[0].url) == "http://agentnava.test/api/v1/agents/agt%2F1"
    assert script.requests[0].headers["Authorization"] == "Bearer ank_test"


def test_async_retries_the_same_way(monkeypatch):
    slept: list[float] = []

    async def fake_sleep(seconds):
        slept.append(seconds)

    monkeypatch.setattr("agentnava.async_client.asyncio.sleep", fake_sleep)

    async def main():
        script = Script(dropped(), error(429, "rate_limited", {"Retry-After": "2"}), httpx.Response(201, json=STARTED))
        http = httpx.AsyncClient(transport=httpx.MockTransport(script))
        async with AsyncAgentNava(api_key="ank_test", base_url="http://agentnava.test", http_client=http) as client:
            conversation = await client.agent("agt_1").start(end_user_id="u_1")
        await http.aclose()
        return conversation, script

    conversation, script = asyncio.run(main())
    assert conversation.id == "conv_1" and len(set(script.keys)) == 1 and len(script.keys) == 3
    assert len(slept) == 2 and slept[1] == 2.0
