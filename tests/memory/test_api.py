"""The REST API for memories, in process (DRF's client): get, set, delete, stop, consent, erase and the list."""

from datetime import UTC, datetime, timedelta
from urllib.parse import quote
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st
from rest_framework import serializers

from agents import services as agent_services
from agents.models import ActionRun, Conversation, EndUser, Message, Plan, Team
from consent.models import Consent
from memory.models import Memory, MemoryRun
from memory.store import services
from memory.store.selectors import api_memory_read, memories_page
from memory.writer.run import run_quiet_window
from surfaces.api.memory import MemoryOut, api_output, iso_time
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start
from tests.api_helpers import api_in_process

pytestmark = pytest.mark.django_db

CARD = "My card is 4111 1111 1111 1111."

ZONES = [ZoneInfo("Asia/Kolkata"), ZoneInfo("America/New_York"), ZoneInfo("Pacific/Chatham")]


@pytest.fixture
def api(team):
    return api_in_process(team)


@pytest.fixture
def base(agent):
    return f"/agents/{agent.public_id}/end-users"


def chat(agent, external_id, texts, *, at=None, memory=True):
    at = at or timezone.now() - timedelta(hours=2)
    conversation = chat_start.conversation_start(agent=agent, external_id=external_id, memory=memory, now=at)
    for i, text in enumerate(texts):
        chat_record.message_record(conversation=conversation, kind="user", text=text, now=at + timedelta(seconds=i + 1))
    return conversation


# --- get and set --------------------------------------------------------------------------


def test_get_of_someone_never_met_is_404_and_of_someone_known_without_a_memory_is_empty(api, base, agent):
    answer = api.get(f"{base}/u_nobody/memory")
    assert (answer.status, answer.code) == (404, "end_user_not_found")
    chat(agent, "u_known", ["Hello."])
    known = api.get(f"{base}/u_known/memory")
    assert known.status == 200, known.body
    assert known.body["text"] == "" and known.body["stopped"] is False and known.body["updatedAt"] is None
    assert known.body["conversations"] == 1 and known.body["lastChatAt"] is not None


def test_set_then_get_returns_the_text_with_every_r21_field(api, base, agent):
    answer = api.put(f"{base}/u_ananya/memory", {"text": "Prefers email over phone.\nWorks from the Pune office."})
    assert answer.status == 200
    got = api.get(f"{base}/u_ananya/memory")
    assert got.status == 200
    body = got.body
    assert set(body) == {
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
    assert body["endUserId"] == "u_ananya" and body["stopped"] is False
    assert body["text"] == "Prefers email over phone.\nWorks from the Pune office."
    assert body["updatedAt"] and body["conversations"] == 0 and body["lastChatAt"] is None
    run = MemoryRun.objects.get()
    assert (run.kind, run.added) == ("api_set", 2)


def test_set_replaces_the_whole_memory(api, base):
    api.put(f"{base}/u_ananya/memory", {"text": "Prefers email over phone.\nWorks from the Pune office."})
    api.put(f"{base}/u_ananya/memory", {"text": "Prefers email over phone."})
    assert api.get(f"{base}/u_ananya/memory").body["text"] == "Prefers email over phone."


@pytest.mark.parametrize(
    "text",
    [
        CARD,
        "Password: hunter2-Blue!",
        "Their Aadhaar is 2345 6789 0124.",
        "API key sk-proj-4f9XbQ2mT7vK1pL8sR3nW6yZ0aC5dE",
        "\n".join(f"Line {i}." for i in range(31)),
        "x" * 301,
    ],
)
def test_set_refuses_secrets_and_over_30_lines_and_changes_nothing(api, base, agent, text):
    api.put(f"{base}/u_ananya/memory", {"text": "Prefers email over phone."})
    before = Memory.objects.get()
    runs = MemoryRun.objects.count()
    answer = api.put(f"{base}/u_ananya/memory", {"text": text})
    assert (answer.status, answer.code, answer.body["error"]["field"]) == (400, "memory_refused", "text")
    assert "4111" not in answer.body["error"]["message"] and "hunter2" not in answer.body["error"]["message"]
    after = Memory.objects.get()
    assert (after.text, after.updated_at) == (before.text, before.updated_at) and MemoryRun.objects.count() == runs


def test_a_refused_set_for_a_new_end_user_leaves_no_end_user(api, base):
    answer = api.put(f"{base}/u_new/memory", {"text": CARD})
    assert answer.code == "memory_refused"
    assert not EndUser.objects.filter(external_id="u_new").exists() and not Memory.objects.exists()


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "text"),
        ({"text": 5}, "text"),
        ({"text": None}, "text"),
        ({"text": "a", "lines": 2}, "lines"),
        ({"text": "a\x00b"}, "text"),
    ],
)
def test_set_refuses_bad_bodies(api, base, body, field):
    answer = api.put(f"{base}/u_ananya/memory", body)
    assert (answer.status, answer.code, answer.body["error"]["field"]) == (400, "invalid_request", field)
    assert not EndUser.objects.exists()


def test_set_refuses_an_end_user_id_that_is_too_long(api, base):
    answer = api.put(f"{base}/{'u' * 201}/memory", {"text": "Likes tea."})
    assert (answer.status, answer.code) == (400, "invalid_end_user_id")
    assert not EndUser.objects.exists()


def test_an_end_user_id_may_hold_a_slash_and_spaces_and_a_line_break_is_refused(api, base):
    assert api.put(f"{base}/org%2F42%20ananya/memory", {"text": "Likes tea."}).status == 200
    assert EndUser.objects.get().external_id == "org/42 ananya"
    assert api.get(f"{base}/org%2F42%20ananya/memory").body["endUserId"] == "org/42 ananya"
    # A control character is in no end-user id (agents.end_user_ids): refused, never stored.
    for path in (f"{base}/a%0Ab/memory", f"{base}/%0A/memory"):
        refused = api.put(path, {"text": "Likes coffee."})
        assert (refused.status, refused.code) == (400, "end_user_id_not_normal")
    assert api.get(f"{base}/a%0Ab/memory").code == "end_user_id_not_normal"
    assert list(EndUser.objects.values_list("external_id", flat=True)) == ["org/42 ananya"]


# --- delete, stop, consent, erase ---------------------------------------------------------


def test_delete_is_gone_and_old_chats_cannot_bring_it_back(api, base, agent):
    conversation = chat(
        agent, "u_ananya", ["I work from the Pune office.", "Please email me, I prefer email over phone."]
    )
    end_user = conversation.end_user
    api.put(f"{base}/u_ananya/memory", {"text": "Prefers email over phone."})
    answer = api.delete(f"{base}/u_ananya/memory")
    assert answer.status == 204
    after = api.get(f"{base}/u_ananya/memory")
    assert after.status == 200 and after.body["text"] == "" and after.body["readUpTo"] is not None
    # The quiet window of the old chat ends after the delete: it must not write the lines again.
    run_quiet_window(end_user_id=end_user.pk, now=timezone.now() + timedelta(hours=1))
    assert Memory.objects.get(end_user=end_user).text == ""
    assert api.get(f"{base}/u_ananya/memory").body["text"] == ""
    assert api.delete(f"{base}/u_ananya/memory").status == 204  # again: still nothing
    assert api.delete(f"{base}/u_never_seen/memory").status == 204
    assert not EndUser.objects.filter(external_id="u_never_seen").exists()


def test_stop_empties_keeps_nothing_more_and_stop_false_resumes(api, base, agent):
    api.put(f"{base}/u_ananya/memory", {"text": "Prefers email over phone."})
    stopped = api.post(f"{base}/u_ananya/memory/stop", {})
    assert stopped.status == 200
    assert (stopped.body["stopped"], stopped.body["text"]) == (True, "") and stopped.body["stoppedAt"]
    assert api.get(f"{base}/u_ananya/memory").body["stopped"] is True
    start = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_ananya"})
    assert (start.body["usesMemory"], start.body["memoryOffReason"]) == (False, "stopped")
    refused = api.put(f"{base}/u_ananya/memory", {"text": "Likes tea."})
    assert (refused.status, refused.code) == (409, "memory_stopped")
    resumed = api.post(f"{base}/u_ananya/memory/stop", {"stop": False})
    assert (resumed.status, resumed.body["stopped"], resumed.body["stoppedAt"]) == (200, False, None)
    # The next get agrees with what stop(false) answered (issue 16 point 6).
    got = api.get(f"{base}/u_ananya/memory")
    assert got.status == 200 and {k: got.body[k] for k in ("text", "stopped", "stoppedAt")} == {
        "text": "",
        "stopped": False,
        "stoppedAt": None,
    }
    assert got.body["readUpTo"] == resumed.body["readUpTo"]
    assert api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_ananya"}).body["usesMemory"] is True
    assert api.put(f"{base}/u_ananya/memory", {"text": "Likes tea."}).status == 200


def test_stop_with_an_explicit_true_and_bad_bodies(api, base):
    assert api.post(f"{base}/u_ananya/memory/stop", {"stop": True}).body["stopped"] is True
    for body, field in (({"stop": "false"}, "stop"), ({"stop": 0}, "stop"), ({"forever": True}, "forever")):
        answer = api.post(f"{base}/u_ananya/memory/stop", body)
        assert (answer.status, answer.code, answer.body["error"]["field"]) == (400, "invalid_request", field)
    assert Memory.objects.get().stopped_at is not None


def test_consent_sets_and_clears_agreed_at_and_opens_memory_with_ask_first(api, base, agent):
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"askFirst": True}})
    first = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_ananya"})
    assert (first.body["usesMemory"], first.body["memoryOffReason"]) == (False, "consent")
    yes = api.post(f"{base}/u_ananya/consent", {"agreed": True})
    assert (yes.status, yes.body["agreed"], yes.body["endUserId"]) == (200, True, "u_ananya") and yes.body["agreedAt"]
    assert api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_ananya"}).body["usesMemory"] is True
    api.put(f"{base}/u_ananya/memory", {"text": "Likes tea."})
    assert api.get(f"{base}/u_ananya/memory").body["agreedAt"] == yes.body["agreedAt"]
    again = api.post(f"{base}/u_ananya/consent", {"agreed": True})
    assert again.body["agreedAt"] == yes.body["agreedAt"]  # the first yes's date is kept
    no = api.post(f"{base}/u_ananya/consent", {"agreed": False})
    assert (no.body["agreed"], no.body["agreedAt"]) == (False, None)
    assert api.get(f"{base}/u_ananya/memory").body["agreedAt"] is None
    assert (
        api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": "u_ananya"}).body["memoryOffReason"]
        == "consent"
    )
    bad = api.post(f"{base}/u_ananya/consent", {})
    assert (bad.status, bad.code, bad.body["error"]["field"]) == (400, "invalid_request", "agreed")
    assert Consent.objects.get().source == "api"


def test_erase_removes_the_memory_and_every_row_about_them_on_that_agent(api, base, agent, team):
    conversation = chat(agent, "u_ananya", ["I work from the Pune office."])
    chat_record.action_run_record(conversation=conversation, name="renew_plan", status="succeeded")
    api.put(f"{base}/u_ananya/memory", {"text": "Works from the Pune office."})
    api.post(f"{base}/u_ananya/consent", {"agreed": True})
    other_agent = agent_services.agent_create(team=team, name="Sales", config={"memorySettings": {"on": True}})
    services.memory_set(
        end_user=agent_services.end_user_get_or_create(agent=other_agent, external_id="u_ananya"), text="Likes tea."
    )
    chat(agent, "u_other", ["Hello"])
    answer = api.delete(f"{base}/u_ananya")
    assert answer.status == 200
    assert answer.body == {
        "endUserId": "u_ananya",
        "memories": 1,
        "lines": 1,
        "memoryRuns": 1,
        "conversations": 1,
        "messages": 1,
        "actions": 1,
        "consents": 1,
        "endUsers": 1,
    }
    assert not EndUser.objects.filter(agent=agent, external_id="u_ananya").exists()
    assert not Conversation.objects.filter(end_user__external_id="u_ananya", agent=agent).exists()
    assert not Message.objects.filter(conversation=conversation.pk).exists()
    assert not ActionRun.objects.exists() and not Consent.objects.exists()
    assert not Memory.objects.filter(agent=agent).exists()
    assert not MemoryRun.objects.filter(memory__agent=agent).exists()
    assert api.get(f"{base}/u_ananya/memory").code == "end_user_not_found"
    # Only that end user, only on that agent.
    assert Memory.objects.get(agent=other_agent).text == "Likes tea."
    assert EndUser.objects.filter(agent=agent, external_id="u_other").exists()
    # Again, or a typo: nothing is known about them, and the answer says so.
    for unknown in ("u_ananya", "u_ananyaa"):
        again = api.delete(f"{base}/{unknown}")
        assert (again.status, again.code) == (404, "end_user_not_found")


# --- R21 fields after chats and a run --------------------------------------------------------


def test_the_read_counts_conversations_with_a_message_and_shows_the_last_run(api, base, agent):
    chat(agent, "u_ananya", ["I work from the Pune office."])
    chat(agent, "u_ananya", ["Please email me, I prefer email over phone."], memory=False)
    chat_start.conversation_start(agent=agent, external_id="u_ananya")  # no message: not counted
    end_user = EndUser.objects.get(external_id="u_ananya")
    run_quiet_window(end_user_id=end_user.pk, now=timezone.now())
    body = api.get(f"{base}/u_ananya/memory").body
    assert body["conversations"] == 2
    assert "Pune" in body["text"]
    assert set(body["lastRun"]) == {"at", "added", "replaced", "removed"} and body["lastRun"]["added"] >= 1
    assert body["readUpTo"] and body["lastChatAt"]
    end_user.refresh_from_db()
    assert body["lastChatAt"].replace("Z", "+00:00") == end_user.last_chat_at.isoformat()


# --- The list ------------------------------------------------------------------------------


def _memories(agent, count, *, start=None, step=timedelta(minutes=1)):
    start = start or timezone.now() - timedelta(days=1)
    for i in range(count):
        end_user = agent_services.end_user_get_or_create(agent=agent, external_id=f"u_{i:03d}")
        services.memory_set(end_user=end_user, text=f"Fact number {i}.", now=start + step * i)


def test_memories_lists_newest_change_first_and_pages_with_before(api, agent):
    _memories(agent, 7)
    path = f"/agents/{agent.public_id}/memories"
    first = api.get(f"{path}?limit=3")
    assert first.status == 200
    assert [m["endUserId"] for m in first.body["memories"]] == ["u_006", "u_005", "u_004"]
    assert first.body["next"]["before"] == first.body["memories"][-1]["updatedAt"]
    before = first.body["memories"][-1]["updatedAt"].replace("+", "%2B")
    second = api.get(f"{path}?limit=3&before={before}")
    assert [m["endUserId"] for m in second.body["memories"]] == ["u_003", "u_002", "u_001"]
    third = api.get(f"{path}?limit=3&cursor={second.body['next']['cursor']}")
    assert [m["endUserId"] for m in third.body["memories"]] == ["u_000"] and third.body["next"] is None
    assert len(api.get(path).body["memories"]) == 7  # the default limit is 50


def test_memories_lists_only_present_memories(api, agent, base):
    _memories(agent, 3)
    api.delete(f"{base}/u_001/memory")
    api.post(f"{base}/u_002/memory/stop", {})
    agent_services.end_user_get_or_create(agent=agent, external_id="u_only_chatted")
    listed = api.get(f"/agents/{agent.public_id}/memories").body["memories"]
    assert [(m["endUserId"], m["stopped"]) for m in listed] == [("u_002", True), ("u_000", False)]


def test_before_paging_is_exact_because_no_two_memories_share_an_updated_at(api, agent):
    """Nine memories written at the same instant: each write that would tie moves on by a
    microsecond, so `before` alone (the document's own way to page) never skips or repeats."""
    same = timezone.now() - timedelta(hours=1)
    for i in range(9):
        end_user = agent_services.end_user_get_or_create(agent=agent, external_id=f"u_{i:03d}")
        services.memory_set(end_user=end_user, text=f"Line {i}.", now=same)
    assert Memory.objects.filter(agent=agent).values("updated_at").distinct().count() == 9
    seen, before = [], None
    for _ in range(6):
        page = api.get(
            f"/agents/{agent.public_id}/memories?limit=2" + (f"&before={quote(before)}" if before else "")
        ).body
        seen += [m["endUserId"] for m in page["memories"]]
        if page["next"] is None:
            break
        before = page["next"]["before"]
    assert sorted(seen) == [f"u_{i:03d}" for i in range(9)] and len(seen) == 9
    # The cursor pages the same way.
    seen, cursor = [], None
    for _ in range(6):
        page = api.get(f"/agents/{agent.public_id}/memories?limit=2" + (f"&cursor={cursor}" if cursor else "")).body
        seen += [m["endUserId"] for m in page["memories"]]
        if page["next"] is None:
            break
        cursor = page["next"]["cursor"]
    assert len(seen) == 9 and len(set(seen)) == 9


def test_the_database_refuses_two_memories_of_an_agent_at_one_updated_at(agent):
    from django.db import IntegrityError, transaction

    _memories(agent, 2)
    first, second = Memory.objects.filter(agent=agent).order_by("id")
    with pytest.raises(IntegrityError), transaction.atomic():
        Memory.objects.filter(pk=second.pk).update(updated_at=first.updated_at)


def test_paging_is_stable_while_rows_change(api, agent, base):
    _memories(agent, 6)
    path = f"/agents/{agent.public_id}/memories?limit=2"
    first = api.get(path).body
    assert [m["endUserId"] for m in first["memories"]] == ["u_005", "u_004"]
    # While the client pages: one memory on a later page changes, one on the seen page changes, one new.
    api.put(f"{base}/u_001/memory", {"text": "Changed."})
    api.put(f"{base}/u_005/memory", {"text": "Changed too."})
    api.put(f"{base}/u_new/memory", {"text": "New."})
    rest, cursor = [], first["next"]["cursor"]
    while cursor:
        page = api.get(f"{path}&cursor={cursor}").body
        rest += [m["endUserId"] for m in page["memories"]]
        cursor = page["next"]["cursor"] if page["next"] else None
    # No row is seen twice and no unchanged row is skipped; changed ones moved to the front.
    assert rest == ["u_003", "u_002", "u_000"]


@pytest.mark.parametrize(
    "query, field",
    [
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=ten", "limit"),
        ("before=yesterday", "before"),
        ("cursor=%%%", "cursor"),
        ("cursor=bm90LWEtY3Vyc29y", "cursor"),
        ("before=2026-01-01T00:00:00Z&cursor=abc", "cursor"),
        ("offset=100", "offset"),
    ],
)
def test_memories_refuses_bad_queries(api, agent, query, field):
    answer = api.get(f"/agents/{agent.public_id}/memories?{query}")
    assert (answer.status, answer.code, answer.body["error"]["field"]) == (400, "invalid_request", field)


def test_limit_200_is_allowed(api, agent):
    _memories(agent, 3)
    assert len(api.get(f"/agents/{agent.public_id}/memories?limit=200").body["memories"]) == 3


def test_a_page_reads_in_one_query_whatever_its_length(agent, django_assert_num_queries):
    for count in (2, 40):
        EndUser.objects.filter(agent=agent).delete()
        _memories(agent, count)
        for memory in Memory.objects.filter(agent=agent)[:count]:
            chat(agent, memory.end_user.external_id, ["Hello"])
        with django_assert_num_queries(1):
            reads, more = memories_page(agent_id=agent.pk, limit=50, before=None, after_key=None)
        assert len(reads) == count and not more and all(r["conversations"] == 1 for r in reads)
        assert all(r["agreedAt"] is None and r["lastChatAt"] for r in reads)


def test_memory_get_is_one_query_once_the_key_is_known(agent, team, django_assert_num_queries):
    """The hot read: the key is cached per process, and the agent, the end user, the memory and its
    R21 fields come in one statement."""
    from rest_framework.test import APIClient

    services.memory_set(
        end_user=agent_services.end_user_get_or_create(agent=agent, external_id="u_1"), text="Prefers email."
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_services.api_key_create(team=team, name='q')[1]}")
    path = f"/api/v1/agents/{agent.public_id}/end-users/u_1/memory"
    assert client.get(path).status_code == 200  # the key is looked up and its last use written
    with django_assert_num_queries(1):
        answer = client.get(path)
    assert answer.status_code == 200 and answer.json()["text"] == "Prefers email."
    with django_assert_num_queries(1):  # the key's team's agent and the page in one statement
        assert client.get(f"/api/v1/agents/{agent.public_id}/memories").status_code == 200


def test_the_page_tells_a_missing_agent_from_an_empty_one(api, agent, team):
    """The page finds the team's agent inside its statement; an empty answer asks which it was."""
    other_team = Team.objects.create(slug="other-page", name="Other", plan=Plan.TEAM)
    other = agent_services.agent_create(team=other_team, name="Theirs", config={"memorySettings": {"on": True}})
    services.memory_set(
        end_user=agent_services.end_user_get_or_create(agent=other, external_id="u_theirs"), text="Likes tea."
    )
    assert api.get(f"/agents/{agent.public_id}/memories").body == {"memories": [], "next": None}
    for missing in (other.public_id, "agt_nothing", "x" * 500):
        answer = api.get(f"/agents/{missing}/memories")
        assert (answer.status, answer.code) == (404, "agent_not_found")


@given(
    at=st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.sampled_from([UTC, *ZONES])
    ),
    zone=st.sampled_from(["UTC", "Asia/Kolkata", "America/St_Johns", "Europe/Berlin"]),
)
def test_the_fast_time_renders_as_the_serializer_field(at, zone):
    """iso_time (the page's formatter: the current zone read once a page) is DateTimeField's text."""
    with timezone.override(zone):
        assert iso_time(at, timezone.get_current_timezone()) == serializers.DateTimeField().to_representation(at)


def test_the_plain_read_renders_exactly_as_the_documented_serializer(agent):
    """memory.get answers plain dicts (no serializer on the hot path): the same JSON the schema's
    MemoryOut makes of the same fields, datetimes, lastRun and nulls included."""
    conversation = chat(agent, "u_r21", ["I prefer email."], at=timezone.now() - timedelta(hours=3))
    end_user = conversation.end_user
    Consent.objects.create(agent=agent, end_user=end_user, agreed_at=timezone.now() - timedelta(days=1), source="api")
    run_quiet_window(end_user_id=end_user.pk, now=timezone.now())
    services.memory_set(end_user=end_user, text="Prefers email over phone.\nWorks from Pune.")
    memory = Memory.objects.get(end_user=end_user)
    memory.refresh_from_db()
    end_user.refresh_from_db()
    _, read = api_memory_read(team_id=agent.team_id, agent_public_id=agent.public_id, external_id="u_r21")
    expected = {
        "endUserId": "u_r21",
        "text": memory.text,
        "stopped": False,
        "updatedAt": memory.updated_at,
        "readUpTo": memory.read_up_to,
        "lastRun": memory.last_run,
        "stoppedAt": None,
        "agreedAt": end_user.consent.agreed_at,
        "lastChatAt": end_user.last_chat_at,
        "conversations": 1,
    }
    assert MemoryOut(expected).data == api_output(read)
    assert read["lastRun"] is None or set(api_output(read)["lastRun"]) == {"at", "added", "replaced", "removed"}
    # A known end user with no memory row, and one never met.
    agent_services.end_user_get_or_create(agent=agent, external_id="u_new")
    _, empty = api_memory_read(team_id=agent.team_id, agent_public_id=agent.public_id, external_id="u_new")
    assert api_output(empty)["text"] == "" and api_output(empty)["updatedAt"] is None
    assert api_memory_read(team_id=agent.team_id, agent_public_id=agent.public_id, external_id="u_nobody") == (
        True,
        None,
    )
    assert api_memory_read(team_id=agent.team_id + 999, agent_public_id=agent.public_id, external_id="u_new") == (
        False,
        None,
    )


def test_an_end_user_id_with_nul_is_refused_never_a_server_error(api, base):
    path = f"{base}/u%00x"
    for answer in (
        api.get(f"{path}/memory"),
        api.put(f"{path}/memory", {"text": "Likes tea."}),
        api.post(f"{path}/memory/stop", {}),
        api.post(f"{path}/consent", {"agreed": True}),
        api.delete(f"{path}/memory"),
        api.delete(path),
    ):
        assert (answer.status, answer.code) == (400, "end_user_id_not_normal")
    assert not EndUser.objects.exists()
