"""Keyboard only (issue 15): change a setting and publish, edit a line, erase an end user, and chat
in the website widget, with Tab, Space, arrows, Enter and Escape: no mouse. Focus is never lost."""

import io

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.urls import reverse
from playwright.sync_api import expect

from agents.models import Agent, AgentVersion, EndUser
from tests.browser.pages import deep_active, new_page, tab_to
from tests.memory.seed import chat, remembered

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def keyboard_sign_in(page, live_server, email, password="pw-for-tests-1"):
    page.goto(f"{live_server.url}/accounts/login/")
    expect(page.locator("input[name=username]")).to_be_focused()  # autofocus
    page.keyboard.type(email)
    page.keyboard.press("Tab")
    page.keyboard.type(password)
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_be_visible()


def test_change_a_setting_and_publish_by_keyboard(browser, live_server, agent, user):
    context, page = new_page(browser, "desktop")
    try:
        keyboard_sign_in(page, live_server, user.username)
        page.goto(live_server.url + reverse("memory:tab", args=[agent.public_id]))
        # The first Tab reaches the skip link, which jumps past the rail.
        page.keyboard.press("Tab")
        assert "Skip to content" in deep_active(page)
        page.keyboard.press("Enter")
        assert deep_active(page).startswith("main|")
        # Quiet for: the radio group is one Tab stop; an arrow moves 15 -> 30.
        tab_to(page, lambda f: "|quietMinutes|" in f)
        page.keyboard.press("ArrowRight")
        expect(page.locator("input[name=quietMinutes][value='30']")).to_be_checked()
        tab_to(page, lambda f: "save-settings" in f)
        page.keyboard.press("Enter")
        expect(page.locator("#draft-bar")).to_contain_text("quiet minutes 15 -> 30")
        tab_to(page, lambda f: "|publish|" in f)
        page.keyboard.press("Enter")  # the confirm step is accepted
        expect(page.locator(".flash-success")).to_contain_text("Published version 2")
        assert (
            AgentVersion.objects.filter(agent=agent)
            .order_by("-number")
            .first()
            .config["memorySettings"]["quietMinutes"]
            == 30
        )
    finally:
        context.close()


def test_edit_a_line_and_erase_an_end_user_by_keyboard(browser, live_server, agent, user):
    memory = remembered(agent, "u_ananya", "Prefers email over phone.\nSpeaks Hindi.")
    chat(agent, "u_ananya", [("user", "Hello")])
    context, page = new_page(browser, "phone")
    try:
        keyboard_sign_in(page, live_server, user.username)
        page.goto(live_server.url + reverse("memory:detail", args=[agent.public_id, memory.end_user_id]))
        # Edit line 2: Enter opens the field with focus in it; Enter saves; focus lands on the result.
        tab_to(
            page,
            lambda f: "Edit line 2" in page.evaluate("() => document.activeElement.getAttribute('aria-label') || ''"),
        )
        page.keyboard.press("Enter")
        expect(page.locator("[data-testid=line-input]")).to_be_focused()
        page.keyboard.press("Control+a")
        page.keyboard.type("Speaks Hindi and English.")
        page.keyboard.press("Enter")
        expect(page.locator("#lines")).to_contain_text("Line 2 corrected.")
        assert "Line 2 corrected." in deep_active(page)  # focus moved to the result, not lost on <body>
        memory.refresh_from_db()
        assert memory.lines == ["Prefers email over phone.", "Speaks Hindi and English."]
        # Escape cancels an edit and changes nothing.
        tab_to(page, lambda f: "edit-line" in f)
        page.keyboard.press("Enter")
        expect(page.locator("[data-testid=line-input]")).to_be_focused()
        page.keyboard.type(" and more")
        page.keyboard.press("Escape")
        expect(page.locator("[data-testid=line-input]")).to_have_count(0)
        memory.refresh_from_db()
        assert memory.lines == ["Prefers email over phone.", "Speaks Hindi and English."]
        # Erase: the link, then the confirmation typed, then Enter.
        tab_to(page, lambda f: "|erase|" in f)
        page.keyboard.press("Enter")
        expect(page.locator("[data-testid=erase-confirm]")).to_be_visible()
        tab_to(page, lambda f: "erase-input" in f)
        page.keyboard.type("u_ananya")
        page.keyboard.press("Enter")
        expect(page.locator(".flash-success")).to_contain_text("Erased u_ananya")
        assert not EndUser.objects.filter(agent=agent, external_id="u_ananya").exists()
    finally:
        context.close()


@pytest.fixture
def demo(db, settings):
    cache.clear()
    settings.DEMO = True
    call_command("seed_demo", "--force", stdout=io.StringIO())
    yield Agent.objects.get(team__slug="demo", name="Support")
    cache.clear()


def test_chat_in_the_widget_by_keyboard(browser, live_server, demo):
    context, page = new_page(browser, "phone")
    try:
        page.goto(f"{live_server.url}/demo/chat/")
        expect(page.locator("[data-an=panel]")).to_be_visible()
        tab_to(page, lambda f: "|input|" in f)
        page.keyboard.type("Hi, can I get my invoice?")
        page.keyboard.press("Enter")
        expect(page.locator("[data-an=message][data-role=agent]")).to_have_count(1)
        # The settings: Enter on the gear moves focus into them; the switch has its words.
        tab_to(page, lambda f: "settings-button" in f)
        page.keyboard.press("Enter")
        assert "settings-done" in deep_active(page)
        tab_to(page, lambda f: "|switch|" in f, backwards=True)
        hint = page.locator("[data-an=switch-hint]")
        expect(hint).to_contain_text("On: this assistant may remember")
        page.keyboard.press("Space")
        expect(page.locator("[data-an=memory-status]")).to_have_text("Memory is off for this chat.")
        expect(hint).to_contain_text("Turning it back on starts a new chat with memory on")
        expect(page.locator("[data-an=switch]")).to_be_enabled()
        # Back on: a new chat, with memory on.
        page.keyboard.press("Space")
        expect(page.locator("[data-an=message][data-role=agent]")).to_have_count(0)
        expect(page.locator("[data-an=notice-line]")).to_have_text("This assistant remembers chats.")
        assert "|input|" in deep_active(page)
        # Escape closes the chat and focus returns to the launcher; Enter opens it again.
        page.keyboard.press("Escape")
        expect(page.locator("[data-an=panel]")).to_be_hidden()
        assert "launcher" in deep_active(page)
        page.keyboard.press("Enter")
        expect(page.locator("[data-an=panel]")).to_be_visible()
        assert "|input|" in deep_active(page)
    finally:
        context.close()


def test_the_chat_widget_passes_axe_and_fits_a_phone(browser, live_server, demo):
    from agents import services as agent_services
    from tests.browser.pages import WIDTHS, check_page

    problems: list[str] = []
    for width in WIDTHS:
        context, page = new_page(browser, width)
        try:
            page.goto(f"{live_server.url}/demo/chat/")
            expect(page.locator("[data-an=panel]")).to_be_visible()
            page.fill("[data-an=input]", "Hi, can I get my invoice?")
            page.click("[data-an=send]")
            expect(page.locator("[data-an=message][data-role=agent]")).to_have_count(1)
            check_page(page, width, "chat", problems)
            page.click("[data-an=settings-button]")
            check_page(page, width, "chat-settings", problems)
        finally:
            context.close()
    agent_services.agent_update(agent=demo, changes={"memorySettings": {"askFirst": True}})
    for width in WIDTHS:
        context, page = new_page(browser, width)
        try:
            page.goto(f"{live_server.url}/demo/chat/")
            expect(page.locator("[data-an=ask]")).to_be_visible()
            check_page(page, width, "chat-ask-first", problems)
        finally:
            context.close()
    assert not problems, "\n".join(problems)
