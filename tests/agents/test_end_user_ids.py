"""One form of an end-user id on every surface (agents.end_user_ids): NFC, no whitespace at the
ends, no control characters; anything else is refused with 400 `end_user_id_not_normal` and
changes nothing, never trimmed into another person. The website chat checks it before the signed
hash, so a valid hash for "bob" never opens " bob", "bob\\n" or "bob\\u00a0"."""

import json
import unicodedata

import pytest
from django.test import Client
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from agents import services as agent_services
from agents.end_user_ids import end_user_id_check, end_user_id_refusal
from agents.errors import AppError
from agents.models import Conversation, EndUser
from memory.models import Memory
from memory.store import services as memory_services
from surfaces.embed.services import end_user_hash
from tests.api_helpers import api_in_process

pytestmark = pytest.mark.django_db

VARIANTS = [" bob", "bob ", "bob\n", "bob\r\n", "\tbob", "bob\u00a0", "\u00a0bob", "bob\u2028", "bob\u3000", "b\x7fob"]
NFD = unicodedata.normalize("NFD", "José")  # "Jose" + U+0301
NFC = unicodedata.normalize("NFC", "José")


@pytest.fixture
def bob(agent):
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id="bob")
    memory_services.memory_set(end_user=end_user, text="Prefers email over phone.")
    return end_user


def embed_start(agent, **body):
    return Client().post(
        f"/embed/v1/agents/{agent.public_id}/start", data=json.dumps(body), content_type="application/json"
    )


def assert_not_normal(answer, field="endUserId"):
    assert answer.status == 400, (answer.status, answer.body)
    assert answer.body["error"]["code"] == "end_user_id_not_normal" and answer.body["error"]["field"] == field


def bobs_world_unchanged(bob):
    assert list(EndUser.objects.values_list("external_id", flat=True)) == ["bob"]
    assert Memory.objects.get(end_user=bob).text == "Prefers email over phone."


# --- The rule -----------------------------------------------------------------------------


def test_the_rule_refuses_and_never_changes_an_id():
    for value in [*VARIANTS, NFD, "a\x00b", "a\u0085b", "a\ud800"]:
        refusal = end_user_id_refusal(value)
        assert refusal and refusal[0] == "end_user_id_not_normal", repr(value)
    for value in ("bob", "u_1", NFC, "Ананья", "李小龍", "bob/memory", "50% off?#", "a b", "क्षि\u200d"):
        assert end_user_id_check(value) == value
    for value in ("", "x" * 201, None, 15):
        assert end_user_id_refusal(value)[0] == "invalid_end_user_id"


@given(st.text(max_size=12))
def test_an_id_is_accepted_only_when_it_is_already_normal(value):
    refusal = end_user_id_refusal(value)
    normal = (
        0 < len(value) <= 200
        and value == value.strip()
        and unicodedata.is_normalized("NFC", value)
        and not any(unicodedata.category(c) in ("Cc", "Cs") for c in value)
    )
    assert (refusal is None) == normal
    if normal:
        assert end_user_id_check(value) == value
    else:
        with pytest.raises(AppError):
            end_user_id_check(value)


# --- The website chat: the id is checked before its hash ----------------------------------


@pytest.mark.parametrize("variant", VARIANTS + [NFD])
def test_a_valid_hash_for_bob_does_not_open_a_variant_of_bob(agent, bob, variant):
    for hash_of in ("bob", variant):
        answer = embed_start(agent, endUserId=variant, endUserHash=end_user_hash(agent, hash_of))
        assert answer.status_code == 400, answer.content
        error = answer.json()["error"]
        assert (error["code"], error["field"]) == ("end_user_id_not_normal", "endUserId")
        assert "Prefers email" not in answer.content.decode()
    assert not Conversation.objects.exists()
    bobs_world_unchanged(bob)


def test_bob_with_his_own_hash_and_an_nfc_name_still_start(agent, bob):
    answer = embed_start(agent, endUserId="bob", endUserHash=end_user_hash(agent, "bob"))
    assert answer.status_code == 201 or answer.status_code == 200, answer.content
    composed = embed_start(agent, endUserId=NFC, endUserHash=end_user_hash(agent, NFC))
    assert composed.status_code in (200, 201), composed.content
    assert set(EndUser.objects.values_list("external_id", flat=True)) == {"bob", NFC}


# --- The API: every operation that takes an endUserId ------------------------------------


def _operations(agent_id, encoded):
    base = f"/agents/{agent_id}/end-users/{encoded}"
    return [
        ("get", f"{base}/memory", None),
        ("put", f"{base}/memory", {"text": "Likes tea."}),
        ("delete", f"{base}/memory", None),
        ("post", f"{base}/memory/stop", {"stop": True}),
        ("post", f"{base}/consent", {"agreed": True}),
        ("get", f"{base}/conversations", None),
        ("get", f"{base}/export", None),
        ("delete", base, None),
        ("delete", f"/end-users/{encoded}", None),
    ]


@pytest.mark.parametrize("variant", VARIANTS + [NFD])
def test_every_api_operation_refuses_a_variant_and_changes_nothing(team, agent, bob, variant):
    from urllib.parse import quote

    api = api_in_process(team)
    for method, path, body in _operations(agent.public_id, quote(variant, safe="")):
        answer = getattr(api, method)(path, body) if body is not None else getattr(api, method)(path)
        assert_not_normal(answer)
    started = api.post(f"/agents/{agent.public_id}/conversations", {"endUserId": variant})
    assert_not_normal(started)
    assert not Conversation.objects.exists()
    bobs_world_unchanged(bob)


def test_the_people_search_keeps_what_was_typed(team, agent, bob):
    api = api_in_process(team)
    agent_services.end_user_get_or_create(agent=agent, external_id="bob smith")
    base = f"/agents/{agent.public_id}/end-users"
    assert [p["endUserId"] for p in api.get(f"{base}?q=bob%20").body["endUsers"]] == ["bob smith"]
    assert_not_normal(api.get(f"{base}?q=bob%0A"), field="q")
    assert_not_normal(api.get(f"{base}?q=Jose%CC%81"), field="q")


# --- The Memory tab ----------------------------------------------------------------------


def test_the_memory_tab_search_and_note_preview_follow_the_same_rules(member_client, agent, bob):
    people = reverse("memory:people", args=[agent.public_id])
    refused = member_client.get(people, {"q": "bob\n"}, HTTP_HX_REQUEST="true").content.decode()
    assert "normal form" in refused
    found = member_client.get(people, {"q": "bob"}, HTTP_HX_REQUEST="true").content.decode()
    assert "bob" in found and "normal form" not in found
    note = reverse("memory:note", args=[agent.public_id])
    for variant in (" bob", "bob\u00a0", NFD):
        page = member_client.get(note, {"note_for": variant}, HTTP_HX_REQUEST="true").content.decode()
        assert 'data-testid="note-refused"' in page and "Prefers email" not in page
    page = member_client.get(note, {"note_for": "bob"}, HTTP_HX_REQUEST="true").content.decode()
    assert "Prefers email over phone." in page
