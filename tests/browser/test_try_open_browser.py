"""Try names the chats it left unread because they are still inside their quiet window, and reads
them when the member ticks "include chats still open" (issue 15), at both widths, with axe-core."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.browser.pages import WIDTHS, check_page, new_page
from tests.browser.test_pages_browser import sign_in
from tests.memory.seed import T0, chat

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_try_says_which_chats_are_still_open_and_includes_them_when_asked(browser, live_server, agent, user):
    chat(agent, "u_open", [("user", "I work from the Pune office.")], start=T0)
    chat(
        agent,
        "u_open",
        [("user", "Please email me, I prefer email over phone.")],
        start=timezone.now() - timedelta(minutes=3),
    )
    problems: list[str] = []
    for width in WIDTHS:
        context, page = new_page(browser, width)
        try:
            sign_in(page, live_server, user.username)
            page.goto(f"{live_server.url}/agents/{agent.public_id}/memory/try/")
            page.get_by_test_id("try-include-open").set_checked(False)
            page.get_by_test_id("try-again").click()
            expect(page.get_by_test_id("try-result")).to_have_attribute("data-status", "done")
            expect(page.get_by_test_id("try-open-chats")).to_contain_text("1 chat still inside its quiet window")
            check_page(page, width, "try-open-chats-left-out", problems)
            page.get_by_test_id("try-include-open").check()
            page.get_by_test_id("try-again").click()
            expect(page.get_by_test_id("try-result")).to_contain_text("Chats still open were read too.")
            expect(page.get_by_test_id("try-open-chats")).to_have_count(0)
            expect(page.get_by_test_id("try-include-open")).to_be_checked()
            check_page(page, width, "try-open-chats-included", problems)
        finally:
            context.close()
    assert not problems, "\n".join(problems)
