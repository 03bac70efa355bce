"""Replace all on one memory's page, in Chromium (issue 9 point 2): the box holds the person's lines,
one a line, never template source; adding a line and saving keeps the others as they were."""

import pytest
from playwright.sync_api import expect

from memory.models import Memory
from tests.browser.test_memory_tab_browser import sign_in
from tests.memory.seed import remembered

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_replace_all_starts_from_the_lines_and_adding_one_keeps_them(page, live_server, agent, user):
    memory = remembered(agent, "u_1", "Prefers email over phone.\nSpeaks Hindi.")
    sign_in(page, live_server, user.username)
    page.goto(f"{live_server.url}/agents/{agent.public_id}/memory/people/{memory.end_user_id}/")
    page.locator("details.replace-all summary").click()
    box = page.locator("[data-testid=replace-text]")
    expect(box).to_have_value("Prefers email over phone.\nSpeaks Hindi.")
    box.fill(box.input_value() + "\nWorks from the Pune office.")
    page.get_by_role("button", name="Replace the memory").click()
    expect(page.locator("#lines")).to_contain_text("Works from the Pune office.")
    assert Memory.objects.get(pk=memory.pk).lines == [
        "Prefers email over phone.",
        "Speaks Hindi.",
        "Works from the Pune office.",
    ]
