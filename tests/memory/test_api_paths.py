"""An endUserId in a path is one segment, whatever it holds (agentnava_site.raw_path): "bob/memory"
and "bob" are two people on every route that takes an end-user id. Over real HTTP: the live server
(which passes the request target as sent, as `manage.py runserver` does) for every route and many
ids, and gunicorn with 2 workers (the production server, its own RAW_URI) for the erase that once
emptied bob's memory."""

from urllib.parse import quote, unquote

import pytest
from django.urls import resolve
from hypothesis import given, settings
from hypothesis import strategies as st

from agentnava_site.raw_path import encoded_path_info
from agents import services as agent_services
from agents.models import EndUser
from memory.models import Memory
from memory.store import services as memory_services
from tests.api_helpers import Api, api_for, api_in_process
from tests.gunicorn import start_gunicorn, stop_gunicorn

IDS = [
    "bob/memory",
    "bob/memory/stop",
    "bob/consent",
    "bob/conversations",
    "bob/export",
    "bob/",
    "/bob",
    "50%off",
    "50%2Fbob",  # a literal "%2F", not a slash
    "who?what=1",
    "a#b",
    "two words",
    "Ананья/отдел",
    "李小龍",
    "علي",
]


def seg(end_user_id: str) -> str:
    return quote(end_user_id, safe="")


@pytest.fixture
def bob(agent):
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id="bob")
    memory_services.memory_set(end_user=end_user, text="Prefers email over phone.")
    return end_user


def every_route_acts_on_itself_only(api, agent, end_user_id):
    """Each route that takes an endUserId, for this id: it is made, read, changed and erased,
    and answers for this id only."""
    base = f"/agents/{agent.public_id}/end-users/{seg(end_user_id)}"
    made = api.put(f"{base}/memory", {"text": f"Likes tea ({end_user_id})."})
    assert made.status == 200 and made.body["endUserId"] == end_user_id, (end_user_id, made.body)
    read = api.get(f"{base}/memory")
    assert read.body["endUserId"] == end_user_id and read.body["text"] == f"Likes tea ({end_user_id})."
    assert api.post(f"{base}/consent", {"agreed": True}).body["endUserId"] == end_user_id
    assert api.post(f"{base}/memory/stop", {"stop": True}).body["stoppedAt"] is not None
    assert api.post(f"{base}/memory/stop", {"stop": False}).body["stoppedAt"] is None
    assert api.get(f"{base}/conversations").body["conversations"] == []
    assert api.get(f"{base}/export").body["endUser"]["endUserId"] == end_user_id
    assert api.delete(f"{base}/memory").status == 204
    erased = api.delete(base)
    assert erased.status == 200 and erased.body["endUserId"] == end_user_id, (end_user_id, erased.body)
    assert api.get(f"{base}/memory").code == "end_user_not_found"
    # The team-wide erase, on a fresh copy of them.
    api.put(f"{base}/memory", {"text": "Again."})
    team_erased = api.delete(f"/end-users/{seg(end_user_id)}")
    assert team_erased.status == 200 and team_erased.body["endUserId"] == end_user_id
    listed = api.get(f"/agents/{agent.public_id}/end-users?q={seg(end_user_id)}").body["endUsers"]
    assert [p["endUserId"] for p in listed] == []


def bob_is_untouched(bob):
    assert Memory.objects.get(end_user=bob).text == "Prefers email over phone."
    assert Memory.objects.get(end_user=bob).stopped_at is None
    assert list(EndUser.objects.values_list("external_id", flat=True)) == ["bob"]


@pytest.mark.django_db(transaction=True)
def test_over_http_every_route_takes_the_segment_as_one_id(live_server, team, agent, bob):
    api = api_for(live_server, team)
    for end_user_id in IDS:
        every_route_acts_on_itself_only(api, agent, end_user_id)
        bob_is_untouched(bob)
    # bob's own routes still answer for bob.
    assert api.get(f"/agents/{agent.public_id}/end-users/bob/memory").body["text"] == "Prefers email over phone."


def test_in_process_with_the_target_as_sent_the_same_holds(team, agent, bob):
    api = api_in_process(team)
    for end_user_id in IDS:
        every_route_acts_on_itself_only(api, agent, end_user_id)
    bob_is_untouched(bob)


def test_an_unencoded_slash_is_a_separator_not_part_of_an_id(team, agent, bob):
    """`end-users/bob/memory` is bob's memory route; `bob/unknown` is no route at all (404
    not_found, never a 405 or another person)."""
    api = api_in_process(team)
    base = f"/agents/{agent.public_id}/end-users"
    assert api.get(f"{base}/bob/memory").body["endUserId"] == "bob"
    assert api.delete(f"{base}/bob/unknown").code == "not_found"
    bob_is_untouched(bob)


@pytest.fixture
def gunicorn(tmp_path):
    server = start_gunicorn(tmp_path, workers=2)
    yield server
    stop_gunicorn(server)


@pytest.mark.django_db(transaction=True)
def test_gunicorn_erasing_bob_slash_memory_leaves_bob(gunicorn, team, agent, bob):
    _, key = agent_services.api_key_create(team=team, name="tests")
    api = Api(f"http://127.0.0.1:{gunicorn.port}/api/v1", key)
    base = f"/agents/{agent.public_id}/end-users"
    # Each request may land on either worker: ask a few times, on new connections.
    for _ in range(4):
        assert api.put(f"{base}/{seg('bob/memory')}/memory", {"text": "Another person."}).status == 200
        erased = api.delete(f"{base}/{seg('bob/memory')}")
        assert erased.status == 200 and erased.body["endUserId"] == "bob/memory"
        bob_is_untouched(bob)
    for suffix in ("export", "conversations", "consent", "memory/stop"):
        api.put(f"{base}/{seg('bob/' + suffix)}/memory", {"text": "Someone else."})
        answer = api.delete(f"{base}/{seg('bob/' + suffix)}")
        assert answer.status == 200 and answer.body["endUserId"] == f"bob/{suffix}", answer.body
        bob_is_untouched(bob)
    assert len({pid for pid, _ in gunicorn.answers_by_worker()}) == 2  # both workers answered


SUFFIXES = {
    "/memory": "api:memory",
    "/memory/stop": "api:memory-stop",
    "/consent": "api:consent",
    "/conversations": "api:end-user-conversations",
    "/export": "api:end-user-export",
    "": "api:end-user",
}


@settings(deadline=None)  # the first example loads the URLconf
@given(
    end_user_id=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30),
    suffix=st.sampled_from(sorted(SUFFIXES)),
)
def test_any_id_encoded_as_a_segment_resolves_to_itself_on_every_route(end_user_id, suffix):
    """Whatever the id holds, the route and the id Django resolves from the path as sent are the
    ones the client meant (raw_path.encoded_path_info, then the end_user_id converter)."""
    raw = f"/api/v1/agents/agt_1/end-users/{seg(end_user_id)}{suffix}"
    match = resolve(encoded_path_info(unquote(raw), raw))
    assert match.view_name == SUFFIXES[suffix]
    assert match.kwargs == {"agent_id": "agt_1", "end_user_id": end_user_id}
    team_wide = resolve(
        encoded_path_info(unquote(f"/api/v1/end-users/{seg(end_user_id)}"), f"/api/v1/end-users/{seg(end_user_id)}")
    )
    assert team_wide.view_name == "api:team-end-user" and team_wide.kwargs == {"end_user_id": end_user_id}
