"""A real browser (Playwright driving Debian's Chromium) on the demo page /demo/chat/, which embeds
the demo agent with <script src="/embed/v1.js">: the website chat as a visitor sees it."""

import io
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import expect

from agents import services as agent_services
from agents.models import Agent, Conversation, EndUser, Message
from consent.models import Consent
from memory.models import Memory, MemoryRun
from memory.store.services import memory_set
from memory.writer.sweep import memory_sweep
from surfaces.embed.services import visitor_id_verify

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo(db, settings):
    cache.clear()
    settings.DEMO = True  # /demo/ answers only with DEBUG or DEMO=1
    call_command("seed_demo", "--force", stdout=io.StringIO())
    yield Agent.objects.get(team__slug="demo", name="Support")
    cache.clear()


def open_demo(page, live_server, query=""):
    page.goto(f"{live_server.url}/demo/chat/{query}")
    expect(page.locator("[data-an=panel]")).to_be_visible()


def stored_visitor_id(page, agent):
    return page.evaluate(f"localStorage.getItem('agentnava:{agent.public_id}:visitor')")


def wait_for_visitor(page, agent):
    # A function, not an expression: Playwright evals an expression, which the demo page's CSP forbids.
    page.wait_for_function(f"() => localStorage.getItem('agentnava:{agent.public_id}:visitor') !== null")
    return stored_visitor_id(page, agent)


def visitor(page, agent) -> EndUser:
    return EndUser.objects.get(agent=agent, external_id=visitor_id_verify(agent, wait_for_visitor(page, agent)))


def say(page, text):
    """Type a message, send it, and wait for the agent's reply to it."""
    before = page.locator("[data-an=message][data-role=agent]").count()
    page.fill("[data-an=input]", text)
    page.click("[data-an=send]")
    expect(page.locator("[data-an=message][data-role=agent]")).to_have_count(before + 1)
    return page.locator("[data-an=message][data-role=agent]").last


def test_send_a_message_and_get_a_reply(page, live_server, demo):
    open_demo(page, live_server)
    expect(page.locator("[data-an=notice-line]")).to_have_text("This assistant remembers chats.")
    reply = say(page, "Hi, can I get my invoice?")
    expect(reply).to_contain_text("receipt")
    expect(page.locator("[data-an=message][data-role=user]")).to_have_text(["Hi, can I get my invoice?"])
    expect(page.locator("[data-an=input]")).to_have_value("")
    end_user = visitor(page, demo)
    assert list(Message.objects.filter(conversation__end_user=end_user).values_list("kind", flat=True)) == [
        "user",
        "agent",
    ]


def test_open_settings_and_see_the_notice_the_switch_and_the_privacy_link(page, live_server, demo, tmp_path):
    open_demo(page, live_server)
    page.click("[data-an=settings-button]")
    settings = page.locator("[data-an=settings]")
    expect(settings).to_be_visible()
    expect(page.locator("[data-an=notice]")).to_contain_text(
        "is an AI assistant that remembers details from your chats"
    )
    expect(page.locator("[data-an=notice]")).to_contain_text('"stop remembering me"')
    expect(page.locator("[data-an=privacy-link]")).to_have_attribute("href", "https://example.com/privacy")
    switch = page.locator("[data-an=switch]")
    expect(switch).to_be_visible()
    expect(switch).to_be_checked()
    page.screenshot(path=str(tmp_path / "chat-settings.png"))
    # The switch turns memory off for this chat (before its first message: the chat starts so).
    switch.click()
    expect(page.locator("[data-an=memory-status]")).to_have_text("Memory is off for this chat.")
    page.click("[data-an=settings-done]")
    expect(page.locator("[data-an=notice-line]")).to_have_text("Memory is off for this chat.")
    say(page, "Hi")
    end_user = visitor(page, demo)
    conversation = Conversation.objects.filter(end_user=end_user).latest("started_at")
    assert (conversation.uses_memory, conversation.memory_off_reason) == (False, "switch")
    expect(page.locator("[data-an=notice-line]")).to_have_text("Memory is off for this chat.")


def test_answer_ask_first_and_see_agreed_at_set(page, live_server, demo):
    agent_services.agent_update(agent=demo, changes={"memorySettings": {"askFirst": True}})
    open_demo(page, live_server)
    ask = page.locator("[data-an=ask]")
    expect(ask).to_be_visible()
    expect(ask).to_contain_text("Can this assistant remember details from our chats to help next time?")
    expect(page.locator("[data-an=input]")).to_be_disabled()  # the question comes before the first message
    # While it is pending the line never says the assistant remembers, and no end user exists yet.
    expect(page.locator("[data-an=notice-line]")).to_have_text("Memory is off until you answer the question above.")
    assert not EndUser.objects.filter(agent=demo, external_id__startswith="visitor_").exists()
    page.click("[data-an=ask-yes]")
    end_user = visitor(page, demo)
    expect(ask).to_be_hidden()
    expect(page.locator("[data-an=input]")).to_be_enabled()
    consent = Consent.objects.get(end_user=end_user)
    assert consent.agreed_at is not None and consent.source == "chat_prompt"
    say(page, "Hello")
    assert Conversation.objects.get(end_user=end_user).uses_memory


def test_ask_first_no_keeps_memory_off(page, live_server, demo):
    agent_services.agent_update(agent=demo, changes={"memorySettings": {"askFirst": True}})
    open_demo(page, live_server)
    page.click("[data-an=ask-no]")
    expect(page.locator("[data-an=notice-line]")).to_have_text("Memory is off: you said no.")
    end_user = visitor(page, demo)
    consent = Consent.objects.get(end_user=end_user)
    assert consent.agreed_at is None and consent.declined_at is not None
    assert Conversation.objects.get(end_user=end_user).memory_off_reason == "consent"
    # Settings offer to allow it after all; nothing has been said, so the chat starts again with memory.
    page.click("[data-an=settings-button]")
    page.click("[data-an=allow-memory]")
    expect(page.locator("[data-an=memory-status]")).to_have_text("Memory is on for this chat.")
    assert Consent.objects.get(end_user=end_user).agreed_at is not None


def test_stop_remembering_me_and_see_the_memory_stopped(page, live_server, demo):
    open_demo(page, live_server)
    say(page, "Hi")
    end_user = visitor(page, demo)
    memory_set(end_user=end_user, text="Prefers email over phone.\nWorks from the Pune office.")
    reply = say(page, "forget that I work from Pune")
    expect(reply).to_contain_text('removed this from what I remember about you: "Works from the Pune office."')
    assert Memory.objects.get(end_user=end_user).lines == ["Prefers email over phone."]
    reply = say(page, "stop remembering me")
    expect(reply).to_contain_text("I've forgotten what I remembered about you")
    expect(page.locator("[data-an=notice-line]")).to_have_text("This assistant no longer remembers you.")
    page.click("[data-an=settings-button]")
    expect(page.locator("[data-an=memory-status]")).to_contain_text("You asked this assistant to stop remembering you.")
    memory = Memory.objects.get(end_user=end_user)
    assert memory.stopped_at is not None and memory.text == ""
    assert MemoryRun.objects.filter(memory=memory, kind="end_user_request").count() == 2


def test_reload_keeps_the_same_visitor_id_and_the_chat(page, live_server, demo):
    open_demo(page, live_server)
    say(page, "Hi, can I get my invoice?")
    first = wait_for_visitor(page, demo)
    page.reload()
    expect(page.locator("[data-an=message][data-role=user]")).to_have_text(["Hi, can I get my invoice?"])
    assert stored_visitor_id(page, demo) == first
    say(page, "thanks")
    end_user = visitor(page, demo)
    assert Conversation.objects.filter(end_user=end_user).count() == 1
    assert EndUser.objects.filter(agent=demo, external_id__startswith="visitor_").count() == 1


def test_a_returning_visitor_is_greeted_and_start_over_keeps_the_memory(page, live_server, demo, tmp_path):
    open_demo(page, live_server)
    say(page, "Please email me rather than calling, I prefer email over phone.")
    end_user = visitor(page, demo)
    # The quiet window ends; the memory is written from what they typed.
    memory_sweep(now=timezone.now() + timedelta(minutes=31), run_inline=True)
    assert Memory.objects.get(end_user=end_user).lines == ["Prefers email over phone."]
    # Start over: a new chat, the same visitor, and what is remembered is kept.
    page.click("[data-an=settings-button]")
    page.click("[data-an=start-over]")
    expect(page.locator("[data-an=message]")).to_have_count(0)
    reply = say(page, "Hi! Can I get my receipt?")
    expect(reply).to_contain_text("Hi again!")
    expect(reply).to_contain_text("Shall I email you the receipt, as usual?")
    assert Conversation.objects.filter(end_user=end_user).count() == 2
    assert Memory.objects.get(end_user=end_user).lines == ["Prefers email over phone."]
    page.screenshot(path=str(tmp_path / "returning-visitor-greeting.png"))
    # The next day, in a new tab: the same visitor id, a new chat, the same greeting.
    tab = page.context.new_page()
    open_demo(tab, live_server)
    assert stored_visitor_id(tab, demo) == stored_visitor_id(page, demo)
    expect(say(tab, "Hello, I need my invoice")).to_contain_text("email you the receipt")
    tab.screenshot(path=str(tmp_path / "returning-visitor-next-day.png"))
    assert (tmp_path / "returning-visitor-greeting.png").stat().st_size > 10_000


def test_a_signed_in_user_of_the_site_is_greeted_from_their_memory(page, live_server, demo, tmp_path):
    open_demo(page, live_server, "?user=u_ananya")
    reply = say(page, "Hi! Can I get my receipt?")
    expect(reply).to_contain_text("Hi again!")
    expect(reply).to_contain_text("email you the receipt")
    page.screenshot(path=str(tmp_path / "signed-in-greeting.png"))
    conversation = Conversation.objects.filter(source="embed").get()
    assert conversation.end_user.external_id == "u_ananya" and conversation.uses_memory
    assert stored_visitor_id(page, demo) is None  # a site's user needs no visitor id


def test_a_tampered_visitor_id_is_replaced_by_a_fresh_one(page, live_server, demo):
    open_demo(page, live_server)
    say(page, "Hi")
    original = wait_for_visitor(page, demo)
    value, signature = original.rsplit(":", 1)  # value:timestamp, signature
    victim = EndUser.objects.create(agent=demo, external_id="visitor_someone_else")
    tampered = f"{victim.external_id}:{signature}"
    page.evaluate(f"localStorage.setItem('agentnava:{demo.public_id}:visitor', {tampered!r})")
    page.reload()
    page.wait_for_function(
        f"() => !['{tampered}', '{original}'].includes(localStorage.getItem('agentnava:{demo.public_id}:visitor'))"
    )
    fresh = stored_visitor_id(page, demo)
    assert visitor_id_verify(demo, fresh) not in (None, victim.external_id, visitor_id_verify(demo, original))
    expect(page.locator("[data-an=message]")).to_have_count(0)  # the old chat is not theirs to resume
    say(page, "Hello again")
    assert not Conversation.objects.filter(end_user=victim).exists()
    assert Conversation.objects.filter(end_user__external_id=visitor_id_verify(demo, fresh)).count() == 1


def test_the_sites_own_consent_step_applies_from_the_next_chat(page, live_server, demo):
    open_demo(page, live_server, "?memory=off")
    expect(page.locator("[data-an=notice-line]")).to_have_text("Memory is off for this chat.")
    say(page, "Hi")
    end_user = visitor(page, demo)
    page.get_by_role("button", name="Allow").click()
    expect(page.locator("#site-consent-result")).to_have_text("Thanks: memory is on from your next chat.")
    consent = Consent.objects.get(end_user=end_user)
    assert consent.agreed_at is not None and consent.source == "site_step"
    expect(page.locator("[data-an=notice-line]")).to_have_text(
        "Memory is off for this chat."
    )  # this chat stays as it was, and the chat says what happens next
    expect(page.locator("[data-an=next-step]")).to_contain_text("Memory will be on from your next chat.")
    page.click("[data-an=next-step-start]")
    expect(page.locator("[data-an=notice-line]")).to_have_text("This assistant remembers chats.")
    expect(page.locator("[data-an=next-step]")).to_be_hidden()
    assert Conversation.objects.filter(end_user=end_user).latest("started_at").uses_memory


def test_a_refused_message_stays_in_the_box_and_the_error_is_shown(page, live_server, demo, settings):
    settings.EMBED_RATE_LIMITS = {"visitor_messages": (1, 3600)}
    open_demo(page, live_server)
    say(page, "Hi")
    page.fill("[data-an=input]", "A second message, too soon")
    page.click("[data-an=send]")
    expect(page.locator("[data-an=error]")).to_contain_text("Too many messages from this chat")
    expect(page.locator("[data-an=input]")).to_have_value("A second message, too soon")
    expect(page.locator("[data-an=message][data-role=user]")).to_have_count(1)
    assert Message.objects.filter(kind="user", conversation__source="embed").count() == 1
