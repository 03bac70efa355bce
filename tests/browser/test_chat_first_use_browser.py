"""The website chat as a visitor first meets it (issue 27), at 1280 and 390 px in Debian's Chromium,
with axe-core clean (no serious or critical violation, the scrolling log included) in every state:
the message shows at once while a slow model answers, the counter near the 4,000 limit, the log
reached by keyboard and the launcher named as it reads, the phone page with the site's own consent
step, no end user before the first message, the line while ask-first is pending, and "Remember me
again" after a stop."""

import io

import pytest
from django.core.cache import cache
from django.core.management import call_command
from playwright.sync_api import expect

from agents import services as agent_services
from agents.models import Agent, EndUser
from consent.models import Consent
from memory.models import Memory
from surfaces.embed.services import visitor_id_verify
from tests.browser.pages import WIDTHS, check_page, deep_active, new_page, tab_to

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo(db, settings):
    cache.clear()
    settings.DEMO = True
    call_command("seed_demo", "--force", stdout=io.StringIO())
    yield Agent.objects.get(team__slug="demo", name="Support")
    cache.clear()


@pytest.fixture(params=list(WIDTHS))
def width(request):
    return request.param


@pytest.fixture
def chat_page(browser, width):
    context, page = new_page(browser, width)
    yield page
    context.close()


def visitors(agent):
    return EndUser.objects.filter(agent=agent, external_id__startswith="visitor_")


def open_demo(page, live_server, query=""):
    page.goto(f"{live_server.url}/demo/chat/{query}")
    expect(page.locator("[data-an=panel]")).to_be_visible()
    expect(page.locator("[data-an=input]")).to_be_enabled()


def say(page, text):
    before = page.locator("[data-an=message][data-role=agent]").count()
    page.fill("[data-an=input]", text)
    page.click("[data-an=send]")
    expect(page.locator("[data-an=message][data-role=agent]")).to_have_count(before + 1)
    return page.locator("[data-an=message][data-role=agent]").last


def axe_clean(page, width, name):
    problems: list[str] = []
    check_page(page, width, name, problems)
    assert not problems, "\n".join(problems)


def test_the_message_shows_at_once_while_a_slow_model_answers(chat_page, live_server, demo, width):
    page = chat_page
    open_demo(page, live_server)
    held = []
    page.route("**/messages", lambda route: held.append(route))  # the model is slow: no answer yet
    page.fill("[data-an=input]", "Hi, can I get my invoice?")
    page.click("[data-an=send]")
    expect(page.locator("[data-an=message][data-role=user]")).to_have_text(["Hi, can I get my invoice?"])
    expect(page.locator("[data-an=input]")).to_have_value("")
    expect(page.locator("[data-an=typing]")).to_have_text("Support is replying\u2026")
    expect(page.locator(".an-empty")).to_have_count(0)  # no "Ask a question to get started." under it
    axe_clean(page, width, "chat-replying")
    for _ in range(100):  # the chat starts first, then the message is sent: wait for it to be held
        if held:
            break
        page.wait_for_timeout(50)
    assert held
    expect(page.locator("[data-an=typing]")).to_be_visible()  # still replying while the model is slow
    held[0].continue_()
    expect(page.locator("[data-an=message][data-role=agent]")).to_have_count(1)
    expect(page.locator("[data-an=typing]")).to_have_count(0)
    page.unroute("**/messages")
    # A message that cannot be sent leaves the log and its words come back to the box.
    page.route("**/messages", lambda route: route.abort())
    page.fill("[data-an=input]", "And the one from May?")
    page.click("[data-an=send]")
    expect(page.locator("[data-an=error]")).to_contain_text("Not sent: Could not reach the assistant")
    expect(page.locator("[data-an=input]")).to_have_value("And the one from May?")
    expect(page.locator("[data-an=message][data-role=user]")).to_have_count(1)
    expect(page.locator("[data-an=typing]")).to_have_count(0)
    axe_clean(page, width, "chat-not-sent")


def test_the_counter_says_a_message_is_too_long_before_sending(chat_page, live_server, demo, width):
    page = chat_page
    open_demo(page, live_server)
    counter = page.locator("[data-an=counter]")
    page.fill("[data-an=input]", "x" * 3000)
    expect(counter).to_be_hidden()
    page.fill("[data-an=input]", "x" * 3900)
    expect(counter).to_have_text("3,900 of 4,000 characters")
    axe_clean(page, width, "chat-counter-near")
    page.fill("[data-an=input]", "y" * 5000)  # a paste is kept whole, never cut to 4,000
    expect(page.locator("[data-an=input]")).to_have_value("y" * 5000)
    expect(counter).to_have_text("Too long: 5,000 of 4,000 characters. Shorten it by 1,000 to send.")
    expect(page.locator("[data-an=send]")).to_be_disabled()
    page.locator("[data-an=input]").press("Enter")
    expect(page.locator("[data-an=message][data-role=user]")).to_have_count(0)
    expect(page.locator("[data-an=input]")).to_have_value("y" * 5000)
    axe_clean(page, width, "chat-counter-over")
    page.fill("[data-an=input]", "y" * 4000)
    expect(counter).to_have_text("4,000 of 4,000 characters")
    expect(page.locator("[data-an=send]")).to_be_enabled()


def test_the_log_is_reached_by_keyboard_and_the_launcher_is_named_as_it_reads(chat_page, live_server, demo, width):
    page = chat_page
    open_demo(page, live_server)
    for i in range(6):
        say(page, f"Question number {i}: can I get my invoice?")
    log = page.locator("[data-an=messages]")
    assert log.evaluate("node => node.scrollHeight > node.clientHeight")  # it scrolls
    assert (log.get_attribute("role"), log.get_attribute("tabindex"), log.get_attribute("aria-label")) == (
        "log",
        "0",
        "Messages",
    )
    page.locator("[data-an=input]").focus()
    tab_to(page, lambda f: "|messages|" in f, backwards=True)
    log.evaluate("node => { node.scrollTop = node.scrollHeight; }")
    page.keyboard.press("Home")  # a focused scrolling region scrolls by keyboard
    page.wait_for_function(
        "() => document.querySelector('[data-agentnava]').shadowRoot.querySelector('[data-an=messages]').scrollTop === 0"
    )
    axe_clean(page, width, "chat-long-log")
    page.keyboard.press("Escape")
    launcher = page.get_by_role("button", name="Chat with Support", exact=True)
    expect(launcher).to_be_visible()
    expect(launcher).to_have_text("Chat with Support")
    assert "launcher" in deep_active(page)
    axe_clean(page, width, "chat-launcher")


def test_the_site_consent_page_on_a_phone_opens_collapsed_and_then_says_what_happens(
    chat_page, live_server, demo, width
):
    page = chat_page
    page.goto(f"{live_server.url}/demo/chat/?memory=off")
    allow = page.get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_visible()
    panel = page.locator("[data-an=panel]")
    if width == "phone":
        expect(page.locator("[data-an=launcher]")).to_be_visible()
        expect(panel).to_be_hidden()  # the site's own button is not covered
        box = allow.bounding_box()
        at_centre = page.evaluate(
            "([x, y]) => document.elementFromPoint(x, y).closest('button') === "
            "document.querySelector('[data-testid=site-consent] button.primary')",
            [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
        )
        assert at_centre
    else:
        expect(panel).to_be_visible()
    axe_clean(page, width, "chat-site-step")
    allow.click()
    expect(page.locator("#site-consent-result")).to_have_text("Thanks: memory is on from your next chat.")
    if width == "phone":
        page.click("[data-an=launcher]")
    expect(panel).to_be_visible()
    # Nothing was said yet: the chat about to begin follows the yes, and says so.
    expect(page.locator("[data-an=notice-line]")).to_have_text("This assistant remembers chats.")
    expect(page.locator("[data-an=next-step]")).to_contain_text("this assistant may remember details from this chat")
    page.click("[data-an=settings-button]")
    expect(page.locator("[data-an=switch-hint]")).not_to_contain_text("not available")
    axe_clean(page, width, "chat-site-step-yes-settings")
    page.click("[data-an=settings-done]")
    say(page, "Hi")
    [end_user] = visitors(demo)
    assert end_user.conversations.get().uses_memory
    assert Consent.objects.get(end_user=end_user).source == "site_step"


def test_no_end_user_is_made_before_the_first_message(chat_page, live_server, demo, width):
    page = chat_page
    open_demo(page, live_server)
    page.reload()
    expect(page.locator("[data-an=input]")).to_be_enabled()
    expect(page.locator("[data-an=notice-line]")).to_have_text("This assistant remembers chats.")
    axe_clean(page, width, "chat-before-first-message")
    assert not visitors(demo).exists()  # two page views, no visitor in the People list
    say(page, "Hi, can I get my invoice?")
    [end_user] = visitors(demo)
    stored = page.evaluate(f"() => localStorage.getItem('agentnava:{demo.public_id}:visitor')")
    assert visitor_id_verify(demo, stored) == end_user.external_id
    assert end_user.conversations.count() == 1


def test_the_line_never_claims_memory_while_ask_first_is_pending(chat_page, live_server, demo, width):
    page = chat_page
    agent_services.agent_update(agent=demo, changes={"memorySettings": {"askFirst": True}})
    page.goto(f"{live_server.url}/demo/chat/")
    expect(page.locator("[data-an=ask]")).to_be_visible()
    line = page.locator("[data-an=notice-line]")
    expect(line).to_have_text("Memory is off until you answer the question above.")
    axe_clean(page, width, "chat-ask-first-pending")
    assert not visitors(demo).exists()
    page.click("[data-an=ask-yes]")
    expect(line).to_have_text("This assistant remembers chats.")
    [end_user] = visitors(demo)
    assert Consent.objects.get(end_user=end_user).agreed_at is not None


def test_remember_me_again_after_stop_remembering_me(chat_page, live_server, demo, width):
    page = chat_page
    open_demo(page, live_server)
    say(page, "Please email me rather than calling.")
    say(page, "stop remembering me")
    [end_user] = visitors(demo)
    assert Memory.objects.get(end_user=end_user).stopped_at is not None
    page.click("[data-an=settings-button]")
    again = page.locator("[data-an=remember-again]")
    expect(again).to_be_visible()
    axe_clean(page, width, "chat-stopped-settings")
    again.click()
    expect(page.locator("[data-an=message][data-role=user]").last).to_have_text("Remember me again")
    expect(page.locator("[data-an=message][data-role=agent]").last).to_contain_text(
        "I'll remember details from our chats again from now on"
    )
    memory = Memory.objects.get(end_user=end_user)
    assert memory.stopped_at is None and memory.text == ""
    consent = Consent.objects.get(end_user=end_user)
    assert consent.agreed_at is not None and consent.source == "chat_prompt"
    expect(page.locator("[data-an=notice-line]")).to_have_text("This assistant remembers chats.")
    page.click("[data-an=settings-button]")
    expect(again).to_be_hidden()
    expect(page.locator("[data-an=memory-status]")).to_have_text("Memory is on for this chat.")
    axe_clean(page, width, "chat-remembered-again")
