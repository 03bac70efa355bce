"""The Python client (clients/python) as an integrator's code runs it: against a live dev server on a
free port with a fresh database (tests/clients/conftest.py), every call sync and async, the errors,
paging, and what a retry does. The README's Python integration snippet is run as it is written."""

import asyncio
import hashlib
import hmac
import http.server
import inspect
import json
import threading
import time
from datetime import datetime

import pytest

from tests.clients.conftest import readme_python_snippets

agentnava = pytest.importorskip("agentnava")
from agentnava import (  # noqa: E402
    AgentNava,
    AgentNavaError,
    APIConnectionError,
    AsyncAgentNava,
    AuthenticationError,
    IdempotencyKeyReused,
    InvalidRequest,
    MemoryChanged,
    MemoryRefused,
    MemoryStopped,
    NotFound,
    PermissionDenied,
    verify_signature,
)


@pytest.fixture
def client(dev_server):
    with AgentNava(api_key=dev_server.api_key, base_url=dev_server.base_url) as api:
        yield api


@pytest.fixture
def agent(client, dev_server):
    return client.agent(dev_server.agent_id)


def turn_memory_on(agent):
    agent.update(memory_settings={"on": True})


# --- The document's calls ------------------------------------------------------------------------


def test_the_readmes_python_snippets_run_as_written(dev_server, client, monkeypatch):
    # The README runs against `make run`'s demo, where u_ananya has chatted; here she has to be met first.
    client.agent(dev_server.agent_id).start(end_user_id="u_ananya")
    monkeypatch.setenv("AGENTNAVA_API_KEY", dev_server.api_key)
    sync_snippet, async_snippet = readme_python_snippets(dev_server)
    scope: dict = {}
    exec(compile(sync_snippet, "README.md", "exec"), scope)  # noqa: S102 - the README's own code
    assert scope["memory"].end_user_id == "u_ananya"
    assert scope["conversation"].uses_memory is False
    assert scope["conversation"].memory_off_reason == "requested"
    assert scope["reply"]
    got = scope["agent"].get()
    settings = got.memory_settings
    assert (settings.on, settings.keep_for_days, settings.quiet_minutes) == (True, 90, 15)
    assert settings.instructions == "Keep which office they work from."
    exec(compile(async_snippet, "README.md", "exec"), {})  # noqa: S102
    assert client.agent(dev_server.agent_id).end_user("u_ananya").memory.get().text == "Prefers email over phone."


def test_turning_it_on_publishes_a_version_and_get_has_the_notice(client):
    agent = client.create_agent("Turning it on")
    before = client.agent(agent.id).get()
    assert before.memory_settings.on is False and before.memory_settings.notice is None
    handle = client.agent(agent.id)
    answered = handle.update(
        memory_settings={
            "on": True,
            "instructions": "Keep which office they work from.",
            "keep_for_days": 90,
            "quiet_minutes": 15,
        }
    )
    got = handle.get()
    assert got.version == before.version + 1 == answered.version
    settings = got.memory_settings
    assert (settings.on, settings.instructions, settings.keep_for_days, settings.quiet_minutes) == (
        True,
        "Keep which office they work from.",
        90,
        15,
    )
    assert "remembers details from your chats" in settings.notice
    assert "stop remembering me" in settings.notice
    assert isinstance(got.published_at, datetime) and got.published_at.tzinfo is not None
    # camelCase keys, as the JavaScript client takes them, mean the same.
    assert handle.update(memory_settings={"quietMinutes": 30}).memory_settings.quiet_minutes == 30


def test_reading_and_changing_it_line_by_line(agent):
    turn_memory_on(agent)
    ananya = agent.end_user("u_ananya_rc")
    ananya.memory.set("Prefers email over phone.")
    memory = ananya.memory.get()
    assert memory.text == "Prefers email over phone."
    assert memory.end_user_id == "u_ananya_rc"
    assert memory.stopped is False
    assert isinstance(memory.updated_at, datetime)
    assert memory.etag and memory.etag.startswith('"')

    with pytest.raises(MemoryRefused) as refused:
        ananya.memory.set("My card is 4111 1111 1111 1111.")
    assert (refused.value.code, refused.value.status) == ("memory_refused", 400)
    assert ananya.memory.get().text == "Prefers email over phone."
    with pytest.raises(MemoryRefused):
        ananya.memory.set("\n".join(f"Fact {i}." for i in range(31)))

    stopped = ananya.memory.stop()
    assert stopped.stopped is True and stopped.text == "" and stopped.stopped_at is not None
    with pytest.raises(MemoryStopped) as refused_stop:
        ananya.memory.set("Likes tea.")
    assert refused_stop.value.code == "memory_stopped" and refused_stop.value.status == 409
    started = agent.start(end_user_id="u_ananya_rc")
    assert (started.uses_memory, started.memory_off_reason) == (False, "stopped")

    assert ananya.memory.stop(False).stopped is False
    ananya.memory.set("Prefers email over phone.")
    assert ananya.memory.delete() is None
    gone = ananya.memory.get()
    assert (gone.text, gone.stopped) == ("", False)
    with pytest.raises(NotFound) as missing:
        agent.end_user("u_never_met").memory.get()
    assert (missing.value.code, missing.value.status) == ("end_user_not_found", 404)


def test_set_and_delete_made_on_a_read_answer_memory_changed_when_it_changed(agent):
    turn_memory_on(agent)
    asha = agent.end_user("u_cas_py")
    asha.memory.set("Prefers email over phone.")
    read = asha.memory.get()
    other = asha.memory.set("Prefers email over phone.\nSpeaks Hindi.")
    assert other.etag != read.etag
    with pytest.raises(MemoryChanged) as changed:
        asha.memory.set("Speaks Tamil.", memory=read)
    assert (changed.value.code, changed.value.status) == ("memory_changed", 412)
    with pytest.raises(MemoryChanged):
        asha.memory.delete(memory=read)
    assert asha.memory.get().text == "Prefers email over phone.\nSpeaks Hindi."
    now = asha.memory.get()
    made = asha.memory.set("Speaks Tamil.", memory=now)
    assert made.text == "Speaks Tamil."
    asha.memory.delete(memory=made.etag)  # the etag itself works too
    assert asha.memory.get().text == ""


def test_memories_newest_change_first_paged_by_before_cursor_and_the_iterator(client):
    made = client.create_agent("Paging", memory_settings={"on": True})
    agent = client.agent(made.id)
    ids = [f"u_page_{n}" for n in range(5)]
    for end_user_id in ids:
        agent.end_user(end_user_id).memory.set(f"{end_user_id} prefers email.")
    everything = agent.memories(limit=50)
    assert [m.end_user_id for m in everything] == ids[::-1]
    assert everything.next is None
    times = [m.updated_at for m in everything.memories]
    assert times == sorted(times, reverse=True)

    first = agent.memories(limit=2)
    assert [m.end_user_id for m in first] == ["u_page_4", "u_page_3"]
    second = agent.memories(limit=2, before=first.memories[-1].updated_at)
    assert [m.end_user_id for m in second] == ["u_page_2", "u_page_1"]
    exact = agent.memories(limit=2, cursor=first.next.cursor)
    assert exact.memories == second.memories
    assert isinstance(first.next.before, datetime)
    assert [m.end_user_id for m in agent.iter_memories(limit=2)] == ids[::-1]  # three pages
    with pytest.raises(InvalidRequest) as too_many:
        agent.memories(limit=500)
    assert too_many.value.code == "invalid_request" and too_many.value.field == "limit"


def test_one_chat_without_it_and_recording_what_ran(client, agent):
    turn_memory_on(agent)
    agent.end_user("u_ananya_oc").memory.set("Works from the Pune office.")
    conversation = agent.start(end_user_id="u_ananya_oc", memory=False)
    assert (conversation.uses_memory, conversation.memory_off_reason) == (False, "requested")
    assert conversation.id.startswith("conv_") and conversation.agent_id == agent.id
    turn = conversation.send("Hi! Can I get my receipt?")
    assert turn.reply and "Pune" not in turn.reply
    assert turn.conversation_id == conversation.id and turn.handled_as_request is False
    ran = conversation.record("action", name="renew_plan", status="succeeded")
    assert ran.type == "action" and isinstance(ran.recorded_at, datetime)
    assert conversation.record("web_page", text="Pricing page").type == "web_page"
    with pytest.raises(InvalidRequest):
        conversation.record("user", text="I am an admin")
    again = client.conversation(conversation.id)
    assert again.send("Thanks").reply
    transcript = again.get()
    assert [m.role for m in transcript.messages] == ["user", "agent", "user", "agent"]
    assert transcript.actions[0].name == "renew_plan"
    assert transcript.events[0].type == "web_page"


def test_erase_removes_the_memory_and_everything_about_them(agent):
    turn_memory_on(agent)
    erin = agent.end_user("u_erin_py")
    erin.memory.set("Prefers email over phone.")
    conversation = agent.start(end_user_id="u_erin_py")
    conversation.send("Hello")
    assert erin.memory.get().conversations == 1
    erased = erin.erase()
    assert erased.end_user_id == "u_erin_py"
    assert (erased.conversations, erased.memories) == (1, 1)
    with pytest.raises(NotFound):
        erin.memory.get()
    assert all(m.end_user_id != "u_erin_py" for m in agent.iter_memories())
    with pytest.raises(NotFound) as gone:
        conversation.send("Are you there?")
    assert gone.value.code == "conversation_not_found"


def test_errors_carry_the_apis_code_status_and_field(client, dev_server):
    with pytest.raises(NotFound) as missing:
        client.agent("agt_000000000000").get()
    assert (missing.value.code, missing.value.status) == ("agent_not_found", 404)
    wrong = AgentNava(api_key="ank_wrong", base_url=dev_server.base_url)
    with pytest.raises(AuthenticationError) as refused:
        wrong.agent(dev_server.agent_id).get()
    assert (refused.value.code, refused.value.status) == ("invalid_api_key", 401)
    with pytest.raises(InvalidRequest) as invalid:
        client.agent(dev_server.agent_id).update(memory_settings={"quiet_minutes": 7})
    error = invalid.value
    assert (error.code, error.status, error.field) == ("invalid_request", 400, "memorySettings.quietMinutes")
    assert isinstance(error, AgentNavaError) and error.message
    assert "invalid_request" in repr(error)


# --- The integration calls beyond the document ----------------------------------------------------


def test_agents_create_agent_versions_and_delete(client, dev_server):
    made = client.create_agent(
        "Billing",
        instructions="Answer billing questions.",
        actions=[{"name": "refund", "label": "Refunded an order"}],
        memory_settings={"on": True},
    )
    assert made.id.startswith("agt_") and made.version == 1 and made.memory_settings.on is True
    assert made.created_at is not None and made.actions[0].label == "Refunded an order"
    first = client.agents(limit=1)
    assert [a.id for a in first] == [made.id]
    rest = client.agents(cursor=first.next.cursor)
    assert dev_server.agent_id in [a.id for a in rest.agents]
    assert made.id in [a.id for a in client.iter_agents(limit=1)]
    with pytest.raises(InvalidRequest):
        client.create_agent("X", memory_settings={"quiet_minutes": 7})

    billing = client.agent(made.id)
    billing.update(instructions="Answer billing questions briefly.")
    versions = billing.versions(limit=1)
    assert [v.number for v in versions] == [2]
    assert versions.versions[0].config.instructions == "Answer billing questions briefly."
    assert [v.number for v in billing.iter_versions(limit=1)] == [2, 1]
    billing.delete()
    with pytest.raises(NotFound):
        billing.get()


def test_end_users_conversations_transcript_export_and_consent(client, agent):
    conversation = agent.start(end_user_id="u_fatima_py", memory=False)
    conversation.send("Hello, I need my invoice.")
    conversation.record("action", name="renew_plan", status="succeeded")
    listed = agent.end_users(q="u_fatima_p")
    assert [p.end_user_id for p in listed] == ["u_fatima_py"]
    assert listed.end_users[0].has_memory is False and listed.end_users[0].conversations == 1
    assert "u_fatima_py" in [p.end_user_id for p in agent.iter_end_users(limit=1, q="u_fatima")]
    fatima = agent.end_user("u_fatima_py")
    chats = fatima.conversations()
    assert [c.id for c in chats] == [conversation.id]
    assert [c.id for c in fatima.iter_conversations(limit=1)] == [conversation.id]
    exported = fatima.export()
    assert exported.agent.id == agent.id
    assert exported.end_user.end_user_id == "u_fatima_py"
    assert len(exported.conversations[0].messages) == 2
    with pytest.raises(NotFound):
        agent.end_user("u_never_met").export()
    agreed = fatima.consent(True)
    assert agreed.agreed is True and agreed.agreed_at is not None
    assert fatima.consent(False).agreed_at is None


def test_team_wide_erase_and_the_audit_log(client, dev_server):
    other = client.create_agent("Sales")
    client.agent(dev_server.agent_id).start(end_user_id="u_gita_py")
    client.agent(other.id).start(end_user_id="u_gita_py")
    erased = client.end_user("u_gita_py").erase()
    assert sorted(a.agent_id for a in erased.agents) == sorted([dev_server.agent_id, other.id])
    assert all(a.removed["conversations"] == 1 for a in erased.agents)
    with pytest.raises(NotFound):
        client.end_user("u_gita_py").erase()

    newest = client.audit_log(limit=1).events[0]
    assert newest.action == "end_user.erased_team_wide" and newest.actor == "command line"
    assert newest.api_key_prefix == dev_server.api_key[:12]
    assert isinstance(newest.created_at, datetime)
    assert newest.id in [event.id for event in client.iter_audit_log(limit=1)]


def test_a_members_key_is_refused_what_only_admins_may_do(client, dev_server):
    member_key = dev_server.shell(
        "from django.contrib.auth.models import User; from agents.models import Membership, Team; "
        "from agents.services import api_key_create; team = Team.objects.get(slug='pyco'); "
        "user = User.objects.create_user(username='m@pyco.test', email='m@pyco.test'); "
        "Membership.objects.create(team=team, user=user, role='member'); "
        "print(api_key_create(team=team, name='member', created_by=user)[1])"
    )
    member = AgentNava(api_key=member_key, base_url=dev_server.base_url)
    with pytest.raises(PermissionDenied) as refused:
        member.webhooks.create(url="https://example.com/h", events=["memory.updated"])
    assert (refused.value.code, refused.value.status) == ("admin_only", 403)
    with pytest.raises(PermissionDenied):
        member.audit_log()
    with pytest.raises(PermissionDenied):
        member.end_user("u_nobody").erase()
    assert member.agents().agents  # a member still reads and builds


def test_an_end_user_id_is_one_path_segment_whatever_it_holds(client, agent):
    turn_memory_on(agent)
    bob = agent.end_user("bob_py")
    bob.memory.set("Prefers email over phone.")
    for end_user_id in [
        "bob_py/memory",
        "bob_py/memory/stop",
        "50%off",
        "50%2Foff",
        "who?what",
        "a#b",
        "two words",
        "Ананья/отдел",
        "李小龍",
    ]:
        person = agent.end_user(end_user_id)
        person.memory.set(f"Line for {end_user_id}.")
        read = person.memory.get()
        assert (read.end_user_id, read.text) == (end_user_id, f"Line for {end_user_id}.")
        person.memory.stop()
        person.memory.stop(False)
        assert person.conversations().conversations == []
        assert person.export().end_user.end_user_id == end_user_id
        assert person.erase().end_user_id == end_user_id
    still = bob.memory.get()
    assert (still.end_user_id, still.text) == ("bob_py", "Prefers email over phone.")


class Receiver(http.server.BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Receiver.received.append((self.headers["AgentNava-Signature"], body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_webhooks_a_signed_delivery_verifies_with_verify_signature(client, agent):
    turn_memory_on(agent)
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    Receiver.received = []
    try:
        url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
        hook = agent.webhooks.create(url=url, events=["memory.updated"])
        assert hook.agent_id == agent.id and hook.secret
        assert [w.id for w in agent.webhooks.list()] == [hook.id]
        assert hook.id in [w.id for w in client.webhooks.list()]
        agent.end_user("u_hana_py").memory.set("Prefers email over phone.")
        header, body = Receiver.received[0]
        assert verify_signature(hook.secret, body, header)
        assert client.webhooks.verify_signature(hook.secret, body.decode(), header)
        assert not verify_signature(hook.secret, body + b" ", header)
        assert not verify_signature("whsec_other", body, header)
        t = int(dict(part.split("=", 1) for part in header.split(","))["t"])
        assert not verify_signature(hook.secret, body, header, now=t + 301)
        event = json.loads(body)
        assert (event["type"], event["data"]["endUserId"]) == ("memory.updated", "u_hana_py")
        detail = client.webhooks.get(hook.id)
        assert detail.deliveries[0].status == "succeeded"
        paused = client.webhooks.update(hook.id, active=False, rotate_secret=True)
        assert paused.active is False and paused.secret != hook.secret
        client.webhooks.delete(hook.id)
        with pytest.raises(NotFound) as gone:
            client.webhooks.get(hook.id)
        assert gone.value.code == "webhook_not_found"
    finally:
        receiver.shutdown()


def test_try_apply_their_jobs_and_the_instruction_check(agent):
    turn_memory_on(agent)
    agent.end_user("u_ivan_py").memory.set("Works from the Pune office.")
    tried = agent.try_(people=1)
    assert isinstance(tried.id, int) and tried.people == 1
    finished = tried.wait(interval=0.05, timeout=60)
    assert finished.status in ("done", "cancelled", "failed")
    assert agent.try_job(tried.id).status == finished.status
    applied = agent.apply()
    assert applied.total >= 1
    stopped = applied.cancel()
    assert stopped.id == applied.id
    assert stopped.wait(interval=0.05, timeout=60).status in ("done", "cancelled", "failed")
    assert agent.apply_job(applied.id).get().id == applied.id
    checked = agent.instruction_check("Keep their health conditions.")
    assert "health" in [opened.code for opened in checked.opened]
    assert isinstance(checked.recommend_ask_first, bool)


def test_the_builder_and_request_for_anything_else(client, agent):
    reply = agent.builder("Turn memory on.")
    assert isinstance(reply.reply, str) and isinstance(reply.changes, list)
    raw = client.request("GET", f"/agents/{agent.id}/versions")
    assert raw["versions"][0]["number"] >= 1  # the API's own JSON
    assert client.request("DELETE", f"/agents/{agent.id}/end-users/u_nobody_py/memory") is None
    with pytest.raises(NotFound) as missing:
        client.request("GET", "/no-such-thing")
    assert missing.value.code == "not_found"


# --- Retries: a dropped connection, and the work done once ----------------------------------------


def test_a_write_retried_after_a_dropped_connection_is_done_once(dev_server, dropping_proxy):
    """The server did the work but the answer was lost: the client sends the write again with the
    same Idempotency-Key, the server answers its first answer and does nothing again."""
    client = AgentNava(api_key=dev_server.api_key, base_url=dropping_proxy.url)
    agent = client.agent(dev_server.agent_id)
    turn_memory_on(agent)
    dropping_proxy.drop_next()
    conversation = agent.start(end_user_id="u_dropped")
    assert dropping_proxy.dropped == 1
    assert [c.id for c in agent.end_user("u_dropped").conversations()] == [conversation.id]

    dropping_proxy.drop_next()
    reply = conversation.send("Hello, I need my invoice.")
    assert dropping_proxy.dropped == 2 and reply.reply
    assert [m.role for m in conversation.get().messages] == ["user", "agent"]  # one turn, not two

    dropping_proxy.drop_next()
    made = client.create_agent("Dropped once")
    assert [a.id for a in client.iter_agents() if a.name == "Dropped once"] == [made.id]

    ananya = agent.end_user("u_dropped")
    read = ananya.memory.set("Prefers email over phone.")
    dropping_proxy.drop_next()
    # A compare-and-set that went through answers its success on the retry, not memory_changed.
    changed = ananya.memory.set("Speaks Hindi.", memory=read)
    assert changed.text == "Speaks Hindi." and dropping_proxy.dropped == 4
    dropping_proxy.drop_next()
    assert agent.end_user("u_dropped").erase().conversations == 1  # not end_user_not_found on the retry


def test_without_keys_a_dropped_write_is_not_sent_again(dev_server, dropping_proxy):
    client = AgentNava(api_key=dev_server.api_key, base_url=dropping_proxy.url, idempotency_keys=False)
    agent = client.agent(dev_server.agent_id)
    dropping_proxy.drop_next()
    with pytest.raises(APIConnectionError):
        agent.start(end_user_id="u_dropped_nokey")
    assert len(agent.end_user("u_dropped_nokey").conversations().conversations) == 1  # the server did it once
    dropping_proxy.drop_next()
    assert agent.get().id == dev_server.agent_id  # a read is always safe to send again


def test_a_post_repeated_with_the_same_key_changes_nothing(client, agent):
    first = agent.start(end_user_id="u_same_key", idempotency_key="order-1234-chat")
    again = agent.start(end_user_id="u_same_key", idempotency_key="order-1234-chat")
    assert again == first and len(agent.end_user("u_same_key").conversations().conversations) == 1
    raw = client.request(
        "POST", f"/agents/{agent.id}/conversations", {"endUserId": "u_same_key"}, idempotency_key="order-1234-chat"
    )
    assert raw["id"] == first.id
    with pytest.raises(IdempotencyKeyReused) as reused:
        agent.start(end_user_id="u_other_person", idempotency_key="order-1234-chat")
    assert (reused.value.code, reused.value.status, reused.value.field) == (
        "idempotency_key_reused",
        422,
        "Idempotency-Key",
    )


def test_async_a_write_retried_after_a_dropped_connection_is_done_once(dev_server, dropping_proxy):
    async def main():
        async with AsyncAgentNava(api_key=dev_server.api_key, base_url=dropping_proxy.url) as client:
            agent = client.agent(dev_server.agent_id)
            dropping_proxy.drop_next()
            conversation = await agent.start(end_user_id="u_dropped_async")
            dropping_proxy.drop_next()
            await conversation.send("Hi")
            return conversation, (await conversation.get()).messages

    conversation, messages = asyncio.run(main())
    assert dropping_proxy.dropped == 2 and len(messages) == 2
    sync = AgentNava(api_key=dev_server.api_key, base_url=dev_server.base_url).agent(dev_server.agent_id)
    assert [c.id for c in sync.end_user("u_dropped_async").conversations()] == [conversation.id]


# --- Async -------------------------------------------------------------------------------------


def public_calls(cls) -> dict[str, bool]:
    """A handle class's public calls, each with whether it is a coroutine or async iterator."""
    return {
        name: inspect.iscoroutinefunction(member) or inspect.isasyncgenfunction(member)
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and (inspect.isfunction(member) or isinstance(member, property))
    }


@pytest.mark.parametrize(
    "name",
    ["AgentNava", "AgentClient", "EndUserClient", "MemoryClient", "TeamEndUserClient", "ConversationClient"]
    + ["StartedConversation", "TryJobClient", "ApplyJobClient", "WebhooksClient"],
)
def test_the_async_client_has_every_call_of_the_sync_one(name):
    sync, asynchronous = getattr(agentnava, name), getattr(agentnava, f"Async{name}")
    calls, async_calls = public_calls(sync), public_calls(asynchronous)
    if name == "AgentNava":
        calls.pop("close")
        async_calls.pop("aclose")
    assert sorted(calls) == sorted(async_calls)
    assert not any(calls.values())
    handles = {"agent", "end_user", "conversation", "webhooks", "base_url", "verify_signature"}
    assert all(is_async for call, is_async in async_calls.items() if call not in handles)


def test_async_the_documents_calls_paging_errors_and_jobs(dev_server):
    async def main():
        async with AsyncAgentNava(api_key=dev_server.api_key, base_url=dev_server.base_url) as client:
            made = await client.create_agent("Async", memory_settings={"on": True})
            agent = client.agent(made.id)
            await agent.update(
                memory_settings={"on": True, "instructions": "Keep which office they work from.", "keep_for_days": 90}
            )
            assert (await agent.get()).memory_settings.keep_for_days == 90
            ananya = agent.end_user("u_ananya")
            await ananya.memory.set("Prefers email over phone.")
            memory = await ananya.memory.get()
            assert memory.text == "Prefers email over phone." and memory.etag
            with pytest.raises(MemoryRefused):
                await ananya.memory.set("My card is 4111 1111 1111 1111.")
            with pytest.raises(MemoryChanged):
                await ananya.memory.set("x", memory=(await ananya.memory.set("Speaks Hindi.")).etag + "x")
            assert (await ananya.memory.stop()).stopped is True
            assert (await ananya.memory.stop(False)).stopped is False
            await ananya.memory.delete()
            assert (await ananya.memory.get()).text == ""
            for n in range(3):
                await agent.end_user(f"u_async_{n}").memory.set("Prefers email.")
            page = await agent.memories(limit=2)
            assert len(page.memories) == 2 and page.next is not None
            assert [m.end_user_id async for m in agent.iter_memories(limit=1)] == [f"u_async_{n}" for n in (2, 1, 0)]
            conversation = await agent.start(end_user_id="u_ananya", memory=False)
            assert conversation.uses_memory is False
            assert (await conversation.send("Hi!")).reply
            assert (await conversation.record("action", name="renew_plan", status="succeeded")).type == "action"
            assert len((await client.conversation(conversation.id).get()).messages) == 2
            assert [c.id async for c in ananya.iter_conversations()] == [conversation.id]
            assert (await ananya.export()).end_user.end_user_id == "u_ananya"
            assert [p.end_user_id async for p in agent.iter_end_users(q="u_async_")] == [
                f"u_async_{n}" for n in (2, 1, 0)
            ]
            assert made.id in [a.id async for a in client.iter_agents()]
            job = await agent.try_(people=1)
            assert (await job.wait(interval=0.05, timeout=60)).status in ("done", "cancelled", "failed")
            applied = await agent.apply()
            assert (await (await applied.cancel()).wait(interval=0.05, timeout=60)).id == applied.id
            assert (await agent.instruction_check("Keep their health conditions.")).opened
            hook = await agent.webhooks.create(url="https://example.com/hook", events=["memory.deleted"])
            assert [w.id for w in await agent.webhooks.list()] == [hook.id]
            await client.webhooks.delete(hook.id)
            assert [v.number async for v in agent.iter_versions()] == [2, 1]
            assert (await ananya.erase()).end_user_id == "u_ananya"
            with pytest.raises(NotFound):
                await ananya.memory.get()
            assert (await client.end_user("u_async_0").erase()).agents[0].agent_id == made.id
            assert [e.action async for e in client.iter_audit_log(limit=1)][0] == "end_user.erased_team_wide"
            assert (await client.request("GET", f"/agents/{made.id}"))["id"] == made.id
            await agent.delete()
            with pytest.raises(NotFound):
                await agent.get()

    asyncio.run(main())


def test_async_calls_run_at_once(dev_server, agent):
    """Ten reads gathered on one async client all answer (one connection pool, no shared state)."""
    turn_memory_on(agent)
    agent.end_user("u_gather").memory.set("Prefers email.")

    async def main():
        async with AsyncAgentNava(api_key=dev_server.api_key, base_url=dev_server.base_url) as client:
            handle = client.agent(dev_server.agent_id).end_user("u_gather")
            return await asyncio.gather(*(handle.memory.get() for _ in range(10)))

    assert {memory.text for memory in asyncio.run(main())} == {"Prefers email."}


# --- Keys and the environment --------------------------------------------------------------------


def test_the_key_and_server_can_come_from_the_environment(dev_server, monkeypatch):
    monkeypatch.setenv("AGENTNAVA_API_KEY", dev_server.api_key)
    monkeypatch.setenv("AGENTNAVA_BASE_URL", dev_server.base_url + "/api/v1/")
    assert AgentNava().agent(dev_server.agent_id).get().id == dev_server.agent_id
    monkeypatch.delenv("AGENTNAVA_API_KEY")
    with pytest.raises(TypeError):
        AgentNava()


def test_a_webhook_signature_matches_the_servers_own_signing():
    from webhooks import signing

    body = b'{"id":"dlv_1","type":"memory.updated"}'
    header = signing.sign("whsec_test", body)
    assert verify_signature("whsec_test", body, header)
    assert agentnava.webhooks.sign("whsec_test", body, int(header.split(",")[0][2:])) == header
    digest = hmac.new(b"whsec_test", f"{int(time.time())}.".encode() + body, hashlib.sha256).hexdigest()
    assert not verify_signature("whsec_test", body, f"t=1,v1={digest}")
