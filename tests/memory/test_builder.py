"""The Builder (PRODUCT "The Builder"; R1-R3): plain words become a draft through the same
validation as everywhere, the reply says what changed, and nothing is published."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from agents import services
from agents.engines import EngineError
from agents.models import AgentDraft, AgentVersion, Plan
from memory.tools import builder
from memory.tools.builder import builder_message, edit_instructions
from memory.tools.builder_rules import builder_changes
from tests.conftest import make_team
from tests.fake_openai import chat_json


def test_the_issue_sentence_changes_the_draft_and_waits_for_publish(agent, user):
    services.agent_update(agent=agent, changes={"memorySettings": {"on": False}})
    result = builder_message(
        agent=agent, message="turn on memory, keep which office they work from, and ask first", user=user
    )
    draft = AgentDraft.objects.get(agent=agent)
    ms = draft.config["memorySettings"]
    assert ms["on"] is True and ms["askFirst"] is True
    assert ms["instructions"] == "Keep which office they work from."
    assert result["draft"] == draft.config
    assert "memory on" in result["changes"] and "ask first on" in result["changes"]
    assert "memory instructions: added \u201cKeep which office they work from.\u201d" in result["changes"]
    assert result["reply"] == (
        "Done, in the draft, waiting for Publish: memory on; ask first on; "
        "memory instructions: added \u201cKeep which office they work from.\u201d"
    )
    assert draft.updated_by == user
    # Nothing published: the live version still has memory off.
    assert AgentVersion.objects.published(agent).config["memorySettings"]["on"] is False
    assert agent.versions.count() == 2


@pytest.mark.parametrize(
    "message, expected",
    [
        ("turn memory off", {"on": False}),
        ("switch memory on", {"on": True}),
        ("quiet for 60 minutes", {"quietMinutes": 60}),
        ("Set quiet minutes to 5", {"quietMinutes": 5}),
        ("update the memory after 30 minutes of quiet", {"quietMinutes": 30}),
        ("wait 1 hour before updating", {"quietMinutes": 60}),
        ("keep memories for 30 days", {"keepForDays": 30}),
        ("keep it for 3 months", {"keepForDays": 90}),
        ("delete after 1 year", {"keepForDays": 365}),
        ("ask for consent before remembering", {"askFirst": True}),
        ("don't ask first", {"askFirst": False}),
        ("show the switch", {"showSwitch": True}),
        ("hide the switch", {"showSwitch": False}),
        ("let end users turn memory off for a chat", {"showSwitch": True}),
        ("our privacy policy is https://example.com/privacy.", {"privacyUrl": "https://example.com/privacy"}),
        ("remove the privacy link", {"privacyUrl": ""}),
    ],
)
def test_the_offline_rules_understand_the_common_phrasings(message, expected):
    found = {k: v for k, v in builder_changes({"message": message})["set"].items() if v is not None}
    assert found == expected


def test_the_offline_rules_read_keep_and_leave_out_and_say_what_they_did_not_understand():
    out = builder_changes(
        {"message": "Keep their preferred language and role, leave out office locations, and make it sing"}
    )
    assert out["keep"] == ["their preferred language and role"]
    assert out["leave_out"] == ["office locations"]
    assert out["not_understood"] == ["make it sing"]


def test_leaving_out_a_thing_replaces_the_sentence_that_kept_it():
    text, added, removed = edit_instructions(
        "Keep which office they work from. Reply in English.", keep=[], leave_out=["office locations"]
    )
    assert text == "Reply in English. Leave out office locations."
    assert added == ["Leave out office locations."] and removed == ["Keep which office they work from."]
    again, added, _ = edit_instructions(text, keep=[], leave_out=["office locations"])
    assert again == text and added == []


def test_a_value_the_validation_refuses_changes_nothing_and_the_reply_says_why(agent, user):
    result = builder_message(agent=agent, message="quiet minutes 7", user=user)
    assert result["changes"] == []
    assert (
        "Quiet for: choose 5, 15, 30 or 60 minutes." in result["reply"]
        and "quietMinutes" not in result["reply"]
        and "Nothing changed." in result["reply"]
    )
    assert result["draft"] is None
    assert not AgentDraft.objects.filter(agent=agent).exists()


def test_a_refused_change_keeps_an_earlier_draft_as_it_was(agent, user):
    builder_message(agent=agent, message="quiet for 5 minutes", user=user)
    before = AgentDraft.objects.get(agent=agent).config
    result = builder_message(agent=agent, message="keep memories for 0 days", user=user)
    assert "Keep for: give a whole number of days from 1 to 3650." in result["reply"]
    assert AgentDraft.objects.get(agent=agent).config == before == result["draft"]


def test_the_plan_gate_is_a_clear_refusal(db):
    team, owner = make_team("smallco", plan=Plan.FREE)
    agent = services.agent_create(team=team, name="Helper")
    result = builder_message(agent=agent, message="turn on memory", user=owner)
    assert "Memory comes with the Team plan and up." in result["reply"]
    assert not AgentDraft.objects.filter(agent=agent).exists()


def test_words_that_are_not_a_setting_change_nothing_and_get_help(agent, user):
    result = builder_message(agent=agent, message="make it sing", user=user)
    assert result["changes"] == [] and result["draft"] is None
    assert "I did not understand \u201cmake it sing\u201d" in result["reply"] and "quiet minutes" in result["reply"]


def test_asking_for_what_is_already_set_says_so(agent, user):
    result = builder_message(agent=agent, message="turn on memory", user=user)
    assert result["changes"] == [] and "already" in result["reply"]
    assert not AgentDraft.objects.filter(agent=agent).exists()


def test_an_empty_or_too_long_message_is_an_error(agent):
    from agents.errors import AppError

    with pytest.raises(AppError) as empty:
        builder_message(agent=agent, message="   ")
    assert empty.value.code == "invalid_message"
    with pytest.raises(AppError) as long:
        builder_message(agent=agent, message="x" * 2001)
    assert long.value.code == "message_too_long"


def test_the_model_engine_reads_the_words_and_the_code_validates(agent, user, openai_engine):
    openai_engine.script.append(
        chat_json(
            {
                "set": {
                    "on": None,
                    "keepForDays": 45,
                    "quietMinutes": 5,
                    "showSwitch": None,
                    "askFirst": True,
                    "privacyUrl": None,
                },
                "keep": ["their preferred language"],
                "leave_out": [],
                "not_understood": [],
            }
        )
    )
    result = builder_message(
        agent=agent, message="Remember their language, ask first, 5 quiet minutes, 45 days", user=user
    )
    sent = openai_engine.requests[0]["json"]
    assert sent["response_format"]["json_schema"]["name"] == "builder_changes"
    assert json.loads(sent["messages"][1]["content"])["message"].startswith("Remember their language")
    ms = AgentDraft.objects.get(agent=agent).config["memorySettings"]
    assert (ms["keepForDays"], ms["quietMinutes"], ms["askFirst"]) == (45, 5, True)
    assert ms["instructions"] == "Keep their preferred language."
    assert "quiet minutes 15 -> 5" in result["changes"]


def test_a_model_answer_in_the_wrong_shape_changes_nothing(agent, user, openai_engine):
    openai_engine.script.append(chat_json({"set": "everything", "keep": [], "leave_out": [], "not_understood": []}))
    with pytest.raises(EngineError):
        builder_message(agent=agent, message="turn memory off", user=user)
    assert not AgentDraft.objects.filter(agent=agent).exists()


def test_a_model_value_of_the_wrong_type_is_refused_by_the_validation(agent, user, openai_engine):
    openai_engine.script.append(
        chat_json(
            {
                "set": {
                    "on": None,
                    "keepForDays": None,
                    "quietMinutes": "15",
                    "showSwitch": None,
                    "askFirst": None,
                    "privacyUrl": None,
                },
                "keep": [],
                "leave_out": [],
                "not_understood": [],
            }
        )
    )
    result = builder_message(agent=agent, message="quiet 15", user=user)
    assert "Quiet for: choose 5, 15, 30 or 60 minutes." in result["reply"] and result["changes"] == []
    assert not AgentDraft.objects.filter(agent=agent).exists()


# --- The side panel on the Build screen --------------------------------------------------


def test_the_side_panel_sends_a_message_and_shows_the_reply(member_client, agent):
    url = reverse("agents:builder", args=[agent.public_id])
    memory_tab = reverse("memory:tab", args=[agent.public_id])
    response = member_client.post(url, {"message": "quiet for 5 minutes", "next": memory_tab})
    assert response.status_code == 302 and response["Location"] == memory_tab
    page = member_client.get(memory_tab).content.decode()
    assert 'data-testid="builder-log"' in page
    assert "quiet for 5 minutes" in page and "quiet minutes 15 -&gt; 5" in page
    assert AgentDraft.objects.get(agent=agent).config["memorySettings"]["quietMinutes"] == 5


def test_the_side_panel_with_htmx_refreshes_the_page_after_a_change(member_client, agent):
    url = reverse("agents:builder", args=[agent.public_id])
    changed = member_client.post(url, {"message": "ask first"}, HTTP_HX_REQUEST="true")
    assert changed.headers.get("HX-Refresh") == "true"
    unchanged = member_client.post(url, {"message": "make it sing"}, HTTP_HX_REQUEST="true")
    assert "HX-Refresh" not in unchanged.headers
    assert "I did not understand" in unchanged.content.decode()


def test_the_side_panel_shows_an_empty_message_error_and_changes_nothing(member_client, agent):
    url = reverse("agents:builder", args=[agent.public_id])
    response = member_client.post(url, {"message": ""}, HTTP_HX_REQUEST="true")
    assert "Tell the Builder what to change." in response.content.decode()
    assert not AgentDraft.objects.filter(agent=agent).exists()


def test_another_teams_member_cannot_use_the_builder(agent, other_team):
    client = Client()
    client.force_login(other_team[1])
    response = client.post(reverse("agents:builder", args=[agent.public_id]), {"message": "turn memory off"})
    assert response.status_code == 404
    assert not AgentDraft.objects.filter(agent=agent).exists()


def test_a_narrower_keep_is_not_added_after_a_precise_one():
    text, added, _ = edit_instructions("Keep food allergies.", keep=["allergies"], leave_out=[])
    assert text == "Keep food allergies." and added == []


def test_opening_a_category_repeats_the_consent_advice(agent, user):
    result = builder_message(agent=agent, message="keep food allergies", user=user)
    assert result["changes"]
    assert "ask first is off" in result["reply"] and "Asking first is recommended" in result["reply"]
    asked = builder_message(agent=agent, message="ask first", user=user)
    assert "Asking first is recommended" not in asked["reply"]


@pytest.mark.parametrize(
    ("message", "field", "words"),
    [
        ("Keep days to 0", "keepForDays", "Keep for: give a whole number of days from 1 to 3650."),
        ("keep for days -3", "keepForDays", "Keep for: give a whole number of days from 1 to 3650."),
        ("set quiet minutes to -5", "quietMinutes", "Quiet for: choose 5, 15, 30 or 60 minutes."),
        ("forget about quiet minutes", "quietMinutes", "Quiet for is 5, 15, 30 or 60 minutes"),
        ("leave out the quiet time", "quietMinutes", "Quiet for is 5, 15, 30 or 60 minutes"),
        ("don't keep the retention", "keepForDays", "Keep for is a whole number of days from 1 to 3650"),
        ("keep the days", "keepForDays", "Keep for is a whole number of days from 1 to 3650"),
        ("don't keep the consent question", "askFirst", "Ask first is on or off"),
        ("leave out the privacy policy link", "privacyUrl", "The privacy policy is a web address"),
        ("keep the switch", "showSwitch", "The switch for end users is shown or hidden"),
    ],
)
def test_a_request_about_a_setting_is_refused_with_its_range_never_made_an_instruction(
    agent, user, message, field, words
):
    before = services.agent_draft_config(agent)["memorySettings"]
    result = builder_message(agent=agent, message=message, user=user)
    assert result["changes"] == [] and result["field"] == field
    assert result["reply"].startswith("I could not make that change:") and words in result["reply"]
    assert "Nothing changed." in result["reply"]
    assert services.agent_draft_config(agent)["memorySettings"] == before  # no "Keep days to 0." sentence
    assert not AgentDraft.objects.filter(agent=agent).exists()


def test_a_setting_named_by_the_model_is_refused_too(agent, user, monkeypatch):
    """The check is the Builder's, after any engine: a model that returns a setting as a thing to
    keep changes nothing either."""

    class Engine:
        def structured(self, **_kwargs):
            data = {"set": {key: None for key in builder.SETTING_KEYS}, "keep": ["keep days to 0"]}
            return type("Result", (), {"data": {**data, "leave_out": [], "not_understood": []}})()

    monkeypatch.setattr(builder, "get_engine", lambda: Engine())
    result = builder_message(agent=agent, message="Keep days to 0", user=user)
    assert result["field"] == "keepForDays" and "Keep for is a whole number" in result["reply"]
    assert not AgentDraft.objects.filter(agent=agent).exists()


@pytest.mark.parametrize(
    "message",
    ["keep which office they work from", "keep their privacy preferences", "leave out the days they were away"],
)
def test_things_to_keep_that_only_sound_like_settings_still_become_instructions(agent, user, message):
    result = builder_message(agent=agent, message=message, user=user)
    assert result["changes"] and "field" not in result


def test_a_value_that_fits_is_set_from_the_same_words(agent, user):
    result = builder_message(agent=agent, message="keep days to 45", user=user)
    assert result["changes"] == ["keep for days 90 -> 45"]
