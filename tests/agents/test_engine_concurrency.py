"""Model calls in flight together (issue 29): `engines.concurrently` keeps up to MODEL_CONCURRENCY
calls waiting on the model at once, every call holds one of the process's slots, and the offline
engine runs its calls one after another in the caller's thread. Counted by the loopback server
(what it saw in flight at once), never timed."""

import threading

from agents.engines import EngineError, OfflineEngine, concurrently, get_engine
from tests.fake_openai import chat_json

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def ask(engine, n):
    return engine.structured(task="probe", system="s", payload={"n": n}, schema=SCHEMA).data["answer"]


def test_calls_overlap_up_to_the_concurrency(openai_engine, settings):
    settings.MODEL_CONCURRENCY = 6
    openai_engine.default = lambda body: chat_json({"answer": body["messages"][-1]["content"]})
    openai_engine.hold_until = 6  # each call waits until six are in flight together
    engine = get_engine()
    answers = concurrently(engine, lambda n: ask(engine, n), list(range(12)))
    assert answers == [f'{{"n": {n}}}' for n in range(12)]  # in the order of the items
    assert openai_engine.most_in_flight == 6


def test_the_cap_holds_whatever_the_pool(openai_engine, settings):
    """More threads than slots (a chat's web threads, a second pool): never more than
    MODEL_CONCURRENCY calls at the server."""
    settings.MODEL_CONCURRENCY = 3
    openai_engine.default = chat_json({"answer": "ok"})
    openai_engine.hold_until = 4  # would gather four if the cap let them through
    openai_engine.hold_seconds = 0.5
    engine = get_engine()
    threads = [threading.Thread(target=ask, args=(engine, n)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(openai_engine.requests) == 8
    assert openai_engine.most_in_flight == 3


def test_a_failing_call_fails_only_its_own_item(openai_engine, settings):
    settings.MODEL_CONCURRENCY = 4

    def answer(body):
        if '"n": 2' in body["messages"][-1]["content"]:
            return {"status": 500, "body": {"error": {"message": "boom"}}}
        return chat_json({"answer": "ok"})

    openai_engine.default = answer
    openai_engine.hold_until = 4
    engine = get_engine()

    def one(n):
        try:
            return ask(engine, n)
        except EngineError as exc:
            return exc.code

    assert concurrently(engine, one, [0, 1, 2, 3]) == ["ok", "ok", "model_error", "ok"]
    assert openai_engine.most_in_flight == 4


def test_the_offline_engine_runs_one_after_another_in_the_callers_thread():
    caller = threading.current_thread()
    seen = []

    def call(n):
        seen.append((n, threading.current_thread() is caller))
        return n * 2

    assert concurrently(OfflineEngine(), call, [1, 2, 3]) == [2, 4, 6]
    assert seen == [(1, True), (2, True), (3, True)]
