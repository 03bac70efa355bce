"""The privacy notice (R27), the ask-first gate and consent records (R26), the guidance (R28)."""

from agents import services as agent_services
from consent.models import Consent
from consent.notice import guidance_for, notice_text
from consent.services import consent_set
from memory.guards import category_topics
from surfaces.chat import start as chat_start


def test_the_notice_says_what_r27_asks_and_links_the_privacy_url():
    text = notice_text({"keepForDays": 90, "privacyUrl": "https://example.com/privacy"}, agent_name="Support")
    assert "AI assistant that remembers details from your chats to help you next time" in text
    assert "can see and change" in text
    assert "90 days after your last chat" in text
    assert '"stop remembering me"' in text and "any chat" in text
    assert text.endswith("https://example.com/privacy")
    assert "Privacy policy" not in notice_text({"keepForDays": 1, "privacyUrl": ""})


def test_ask_first_keeps_memory_off_until_yes_and_a_no_keeps_it_off(agent):
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"askFirst": True}})
    first = chat_start.conversation_start(agent=agent, external_id="u_1")
    assert (first.uses_memory, first.memory_off_reason) == (False, "consent")
    consent = consent_set(end_user=first.end_user, agreed=True, source=Consent.Source.CHAT_PROMPT)
    assert consent.agreed_at is not None
    assert chat_start.conversation_start(agent=agent, external_id="u_1").uses_memory
    agreed_at = consent.agreed_at
    # A second yes keeps the first date.
    assert consent_set(end_user=first.end_user, agreed=True, source=Consent.Source.API).agreed_at == agreed_at
    consent_set(end_user=first.end_user, agreed=False, source=Consent.Source.API)
    assert Consent.objects.get().agreed_at is None
    assert not chat_start.conversation_start(agent=agent, external_id="u_1").uses_memory


def test_guidance_rows_follow_what_instructions_open():
    sensitive = guidance_for(topics=category_topics(frozenset({"health"})), decisions=False)
    assert {row.where for row in sensitive} == {"EU and UK", "India"}
    assert [row.where for row in guidance_for(topics=frozenset(), decisions=True)] == ["Anywhere"]
    assert guidance_for(topics=frozenset(), decisions=False) == []
