"""A real browser (Playwright driving Debian's Chromium) signs in, opens the Build screen and publishes."""

import pytest
from playwright.sync_api import expect

from agents.models import AgentVersion

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def sign_in(page, live_server, email, password="pw-for-tests-1"):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", email)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")


def test_sign_in_open_the_build_screen_and_publish_a_draft(page, live_server, agent, user, tmp_path):
    sign_in(page, live_server, user.username)
    expect(page.locator("h1")).to_contain_text("Support")
    page.click("nav.tabs >> text=Memory")
    expect(page.locator("#memory-settings")).to_be_visible()
    page.check("input[name=quietMinutes][value='5']")
    page.fill("textarea[name=instructions]", "Keep which office they work from.")
    page.click("#memory-settings button.primary")
    bar = page.locator("#draft-bar")
    expect(bar).to_contain_text("quiet minutes 15 -> 5")
    page.screenshot(path=str(tmp_path / "build-screen-draft.png"), full_page=True)
    # Publish asks first, saying what goes live.
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.click("[data-testid=publish]")
    expect(page.locator(".flash-success")).to_contain_text("Published version 2")
    assert "Publish version 2?" in asked[0] and "quiet minutes 15 -> 5" in asked[0]
    expect(page.locator("#draft-bar")).to_have_count(0)
    assert AgentVersion.objects.filter(agent=agent).count() == 2
    page.click("nav.tabs >> text=Versions")
    expect(page.locator("[data-testid=version-diff]")).to_contain_text("quiet minutes 15 -> 5")
    page.screenshot(path=str(tmp_path / "build-screen-versions.png"), full_page=True)
    assert (tmp_path / "build-screen-versions.png").stat().st_size > 10_000


def test_wrong_password_is_refused(page, live_server, user):
    sign_in(page, live_server, user.username, password="wrong")
    expect(page.locator(".flash-error")).to_contain_text("do not match")
