"""Every write path runs the same normalised guard (issue 10): a slashed card number, which the old
guard let through ("4242/4242/4242/4242"), is refused by the writer, Apply's replace, the API's set, the
Memory tab's line edit, Replace all and the Builder, and nothing of it is stored."""

from datetime import timedelta

import pytest
from django.urls import reverse

from agents.models import AgentDraft
from memory import guards as policy
from memory.models import Memory, MemoryRun
from memory.store import services
from memory.tools import apply
from memory.tools.builder import builder_message
from memory.writer import sweep as writer_sweep
from tests.api_helpers import api_for
from tests.fake_openai import chat_json
from tests.memory.seed import chat, remembered

SLASHED = "4242/4242/4242/4242"
LINES = "Prefers email over phone.\nWorks from the Pune office."
HTMX = {"HTTP_HX_REQUEST": "true"}


def _url(name, memory, *extra):
    return reverse(f"memory:{name}", args=[memory.agent.public_id, memory.end_user_id, *extra])


def test_the_writer_drops_a_slashed_card_a_model_offers(agent, openai_engine):
    conversation, last = chat(agent, "u_1", [("user", f"Charge my card {SLASHED} please, and email me the receipt.")])
    message_id = f"m{conversation.messages.get(kind='user').pk}"
    openai_engine.script.append(
        chat_json(
            {
                "operations": [
                    {"op": "add", "line": None, "text": f"Pays with card {SLASHED}.", "sources": [message_id]},
                    {"op": "add", "line": None, "text": "Prefers the receipt by email.", "sources": [message_id]},
                ]
            }
        )
    )
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    memory = Memory.objects.get(end_user__external_id="u_1")
    assert memory.lines == ["Prefers the receipt by email."]
    assert MemoryRun.objects.get(memory=memory, kind="quiet").dropped == {"card_number": 1}


def test_apply_drops_a_replace_holding_a_slashed_card(agent, user, openai_engine):
    remembered(agent, "u_1", LINES)
    openai_engine.default = chat_json(
        {
            "operations": [
                {"op": "replace", "line": 1, "text": f"Pays with card {SLASHED}.", "sources": []},
            ]
        }
    )
    job = apply.apply_start(agent=agent, user=user)
    job.refresh_from_db()
    assert job.dropped == {"card_number": 1} and job.changed == 0
    assert Memory.objects.get().lines == LINES.split("\n")


@pytest.mark.django_db(transaction=True)
def test_the_api_set_refuses_a_slashed_card(live_server, team, agent):
    api = api_for(live_server, team)
    answer = api.put(f"/agents/{agent.public_id}/end-users/u_1/memory", {"text": f"Prefers email.\nCard {SLASHED}"})
    assert answer.code == "memory_refused"
    assert not Memory.objects.exclude(text="").exists()


def test_the_tab_line_edit_refuses_a_slashed_card_and_says_why_without_the_number(member_client, agent):
    memory = remembered(agent, "u_1", LINES)
    response = member_client.post(
        _url("line_edit", memory, 1), {"text": f"Card {SLASHED}", "was": "Prefers email over phone."}, **HTMX
    )
    page = response.content.decode()
    refused = page.split('data-testid="refused"')[1].split("</div>")[0]
    assert "looks like a card number" in refused
    assert "4242" not in page
    memory.refresh_from_db()
    assert memory.lines == LINES.split("\n")


def test_replace_all_refuses_a_slashed_card(member_client, agent):
    memory = remembered(agent, "u_1", LINES)
    response = member_client.post(_url("replace", memory), {"text": f"{LINES}\nPays with {SLASHED}"}, **HTMX)
    assert "4242" not in response.content.decode()
    memory.refresh_from_db()
    assert memory.lines == LINES.split("\n")


def test_the_builder_refuses_instructions_holding_a_slashed_card(agent, user):
    result = builder_message(agent=agent, message=f"keep their card {SLASHED}", user=user)
    assert result["changes"] == [] and result["draft"] is None
    assert not AgentDraft.objects.filter(agent=agent).exists()
    assert "looks like a card number" in result["reply"] and SLASHED not in result["reply"]


@pytest.mark.parametrize(
    "text",
    [
        "Card 4242.4242.4242.4242",
        "Card 4242_4242_4242_4242",
        "Card 4242 - 4242 - 4242 - 4242",
        "Card 4242\u200b4242\u200b4242\u200b4242",
        "Card 4242\u00a04242\u00a04242\u00a04242",
        "Card \uff14\uff12\uff14\uff12\uff14\uff12\uff14\uff12\uff14\uff12\uff14\uff12\uff14\uff12\uff14\uff12",
        "Card \u096a\u0968\u096a\u0968 \u096a\u0968\u096a\u0968 \u096a\u0968\u096a\u0968 \u096a\u0968\u096a\u0968",
        "Card four two four two four two four two four two four two four two four two",
    ],
)
def test_every_shape_of_a_card_is_refused_by_set(agent, text):
    end_user = remembered(agent, "u_1", LINES).end_user
    with pytest.raises(policy.MemoryRefused) as refused:
        services.memory_set(end_user=end_user, text=text)
    assert refused.value.reason == "card_number"


HOSTILE = [
    "Takes metformin every morning.",
    "Goes to mass every Sunday.",
    "Is a Labour supporter.",
    "Is Korean-American.",
    "Has $20,000 saved.",
    "Chats with us for company.",
    "Raj from their team prefers Slack.",
    "Can approve refunds without checks.",
    "Está embarazada.",
    "Ist arbeitslos.",
    "उन्हें मधुमेह है।",
    "Mi contraseña es girasol",
    "hunter2 is my password",
    "mera password hunter2 hai",
    "Door code 4821#",
    "Aadhaar 2345.6789.0124",
    "SSN 536.22.1234",
    "IBAN DE89 3704 0044 0532 0130 00",
]


def test_a_hostile_model_citing_real_messages_gets_nothing_stored(agent, openai_engine):
    # The person typed every one of these, so the lines cite a real message that holds their words:
    # only the guards on content stand between the model and the memory.
    conversation, last = chat(agent, "u_1", [("user", " ".join(HOSTILE)), ("user", "Please email me.")])
    ids = [f"m{m.pk}" for m in conversation.messages.filter(kind="user").order_by("pk")]
    openai_engine.script.append(
        chat_json(
            {
                "operations": [
                    *({"op": "add", "line": None, "text": text, "sources": ids} for text in HOSTILE),
                    {"op": "add", "line": None, "text": "Prefers email.", "sources": ids},
                ]
            }
        )
    )
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    memory = Memory.objects.get(end_user__external_id="u_1")
    assert memory.lines == ["Prefers email."]
    assert sum(MemoryRun.objects.get(memory=memory, kind="quiet").dropped.values()) == len(HOSTILE)
