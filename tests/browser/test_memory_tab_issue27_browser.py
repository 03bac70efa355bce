"""Issue 27's Memory tab and Builder items in Debian's Chromium, at 1280 and 390 px, with axe-core
clean (no serious or critical violation) and no sideways scroll in every changed state, each
photographed into artifacts/screenshots/<width>/: People newest change first (and the other orders,
stacked on a phone), the team switcher, the plan-gated switch, every settings error at once with
focus on the summary, panels that follow an edit and an Apply without a reload, the line delete that
names its line and can be undone, Escape in a line edit, times in the reader's own zone, and a
Builder refusal linked to its field."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from django_q.conf import Conf
from playwright.sync_api import expect

from agents import services as agent_services
from agents.models import Membership, Plan
from memory.models import Memory
from memory.store import services
from memory.tools import apply as memory_apply
from tests.browser.pages import WIDTHS, check_page, deep_active, new_page
from tests.conftest import make_team
from tests.memory.seed import remembered

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def sign_in(page, live_server, email, password="pw-for-tests-1"):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", email)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_be_visible()


def row_ids(page) -> list[str]:
    return page.locator("[data-testid=memory-row] th a").all_inner_texts()


def test_people_newest_change_first_other_orders_and_the_team_switcher(browser, live_server, agent, user):
    base = timezone.now() - timedelta(days=2)
    old = remembered(agent, "u_old", "Prefers email over phone.", at=base)
    remembered(agent, "u_mid", "Speaks Hindi.", at=base + timedelta(hours=1))
    remembered(agent, "u_new", "Is on the Pro plan.", at=base + timedelta(hours=2))
    services.memory_line_add(end_user=old.end_user, text="Uses a Mac.")  # first seen, changed last
    other, _ = make_team("globex")
    Membership.objects.create(team=other, user=user, role=Membership.Role.MEMBER)
    agent_services.agent_create(team=other, name="Sales")
    problems: list[str] = []
    for width in WIDTHS:
        context, page = new_page(browser, width)
        try:
            sign_in(page, live_server, user.username)
            page.goto(live_server.url + reverse("memory:people", args=[agent.public_id]))
            assert row_ids(page) == ["u_old", "u_new", "u_mid"]
            expect(page.locator("[data-testid=people-order]")).to_have_value("changed")
            updated = page.locator("[data-testid=memory-row]").first.locator("[data-testid=updated]")
            expect(updated).to_be_visible()  # on a phone too: a stacked card, not an id column alone
            expect(updated.locator("time")).to_contain_text("UTC")  # the reader's zone, named
            if width == "phone":
                row = page.locator("[data-testid=memory-row]").first
                assert row.evaluate("el => getComputedStyle(el).display") == "block"
                expect(row.locator("td[data-label=Consent]")).to_be_visible()
            check_page(page, width, "issue27-people-newest-change-first", problems)
            page.select_option("[data-testid=people-order]", "id")
            expect(page.locator("[data-testid=memory-row] th a").first).to_have_text("u_mid")
            assert row_ids(page) == ["u_mid", "u_new", "u_old"]
            assert "order=id" in page.url
            check_page(page, width, "issue27-people-by-id", problems)
            # The switcher, from this page: the other team's agents.
            switcher = page.locator("[data-testid=team-switcher]")
            expect(switcher).to_be_visible()
            switcher.locator("select").select_option(label="Globex")
            switcher.locator("button").click()
            expect(page.locator("h1")).to_have_text("Sales")
            expect(page.locator("[data-testid=team-switcher] select")).to_have_value(str(other.pk))
            check_page(page, width, "issue27-team-switched", problems)
            page.locator("[data-testid=team-switcher] select").select_option(label="Acme")
            page.locator("[data-testid=team-switcher] button").click()
            expect(page.locator("h1")).to_have_text("Support")
        finally:
            context.close()
    assert problems == [], "\n".join(problems)


def test_a_plan_without_memory_shows_the_switch_disabled_with_the_plan_it_needs(browser, live_server):
    team, owner = make_team("smallco", plan=Plan.FREE)
    agent = agent_services.agent_create(team=team, name="Helper")
    problems: list[str] = []
    for width in WIDTHS:
        context, page = new_page(browser, width)
        try:
            sign_in(page, live_server, owner.username)
            page.goto(live_server.url + reverse("memory:tab", args=[agent.public_id]))
            expect(page.locator("[data-testid=memory-switch]")).to_be_disabled()
            expect(page.locator("[data-testid=plan-gate]")).to_contain_text("Needs the Team plan or up")
            page.locator("label.switch").click(force=True)  # a click changes nothing
            expect(page.locator("[data-testid=memory-switch]")).not_to_be_checked()
            check_page(page, width, "issue27-plan-gated-switch", problems)
            # The other settings still save, and no refusal is stacked on the page.
            page.check("input[name=quietMinutes][value='15']")
            page.click("[data-testid=save-settings]")
            expect(page.locator(".flash-success")).to_contain_text("saved to the draft")
            expect(page.locator("[data-testid=settings-error]")).to_have_count(0)
            agent_services.agent_draft_discard(agent=agent)
        finally:
            context.close()
    assert problems == [], "\n".join(problems)


def test_settings_errors_all_at_once_linked_and_focused(browser, live_server, agent, user):
    problems: list[str] = []
    for width in WIDTHS:
        context, page = new_page(browser, width)
        try:
            sign_in(page, live_server, user.username)
            page.goto(live_server.url + reverse("memory:tab", args=[agent.public_id]))
            page.fill("#ms-keep", "0")
            page.fill("#ms-privacy", "javascript:alert(1)")
            page.click("[data-testid=save-settings]")
            summary = page.locator("[data-testid=settings-error]")
            expect(summary).to_contain_text("Not saved: 2 problems to fix.")
            expect(summary).to_be_focused()
            expect(page.locator("[data-testid=error-keepForDays]")).to_be_visible()
            expect(page.locator("[data-testid=error-privacyUrl]")).to_be_visible()
            assert page.get_attribute("#ms-keep", "aria-describedby") == "keep-help keep-error"
            check_page(page, width, "issue27-settings-errors", problems)
            page.click("[data-testid=error-link-privacyUrl]")
            expect(page.locator("#ms-privacy")).to_be_focused()
            page.click("[data-testid=error-link-keepForDays]")
            expect(page.locator("#ms-keep")).to_be_focused()
            expect(page.locator("#ms-keep")).to_have_value("0")  # what was typed is kept
        finally:
            context.close()
    assert problems == [], "\n".join(problems)


def test_one_memory_follows_each_edit_and_a_delete_can_be_undone(browser, live_server, agent, user):
    memory = remembered(agent, "u_edit", "Prefers email over phone.\nSpeaks Hindi.\nIs on the Pro plan.")
    Memory.objects.filter(pk=memory.pk).update(updated_at=timezone.now() - timedelta(days=3))
    problems: list[str] = []
    for width in WIDTHS:
        asked: list[str] = []

        def answer(dialog, asked=asked):
            asked.append(dialog.message)
            dialog.accept()

        context, page = new_page(browser, width, dialogs=answer)
        try:
            sign_in(page, live_server, user.username)
            page.goto(live_server.url + reverse("memory:detail", args=[agent.public_id, memory.end_user_id]))
            updated = page.locator("[data-testid=memory-facts] dd").first.locator("time")
            before = updated.get_attribute("datetime")
            lines = page.locator("[data-testid=memory-line]")
            # Escape in an edit: the edit closes and focus is back on that line's edit button.
            lines.nth(1).locator("[data-testid=edit-line]").click()
            expect(page.locator("[data-testid=line-input]")).to_be_focused()
            page.keyboard.press("Escape")
            expect(page.locator("[data-testid=line-input]")).to_have_count(0)
            expect(lines.nth(1).locator("[data-testid=edit-line]")).to_be_focused()
            assert "edit-line" in deep_active(page)
            # An edit: "Updated" changes without a reload.
            lines.nth(1).locator("[data-testid=edit-line]").click()
            page.fill("[data-testid=line-input]", f"Speaks Hindi and English ({width}).")
            page.click("[data-testid=save-line]")
            expect(page.locator("#lines")).to_contain_text("Line 2 corrected.")
            expect(updated).not_to_have_attribute("datetime", before)
            check_page(page, width, "issue27-memory-after-edit", problems)
            # Delete names its line, and Undo brings the words back.
            lines.nth(2).locator("[data-testid=delete-line]").click()
            expect(page.locator("#lines")).to_contain_text("Line 3 deleted.")
            assert asked[-1] == "Delete line 3: \u201cIs on the Pro plan.\u201d?"
            expect(lines).to_have_count(2)
            expect(page.locator("#memory-note")).not_to_contain_text("Is on the Pro plan.")
            check_page(page, width, "issue27-memory-line-deleted-undo", problems)
            page.click("[data-testid=undo-delete]")
            expect(lines).to_have_count(3)
            expect(lines.nth(2)).to_contain_text("Is on the Pro plan.")
            expect(page.locator("#memory-note")).to_contain_text("Is on the Pro plan.")
        finally:
            context.close()
    assert problems == [], "\n".join(problems)


def test_the_note_panel_shows_the_lines_as_they_are_after_apply(browser, live_server, agent, user, monkeypatch):
    agent_services.agent_update(
        agent=agent, changes={"memorySettings": {"on": True, "instructions": "Leave out office locations."}}
    )
    problems: list[str] = []
    for width in WIDTHS:
        remembered(agent, f"u_pune_{width}", "Works from the Pune office.\nPrefers email over phone.")
        monkeypatch.setattr(Conf, "SYNC", False)  # queued: the page watches it while it runs
        job = memory_apply.apply_start(agent=agent, user=user)
        context, page = new_page(browser, width)
        try:
            sign_in(page, live_server, user.username)
            tab = reverse("memory:tab", args=[agent.public_id])
            page.goto(f"{live_server.url}{tab}?note_for=u_pune_{width}")
            note = page.locator("#note-preview")
            expect(note).to_contain_text("Works from the Pune office.")
            expect(page.locator("[data-testid=apply-job]")).to_have_attribute("data-status", "queued")
            memory_apply.apply_job_step(job.pk, enqueue_next=False)  # the worker's part, here
            expect(page.locator("[data-testid=apply-job]")).to_have_attribute("data-status", "done")
            expect(note).not_to_contain_text("Works from the Pune office.")
            expect(note).to_contain_text("Prefers email over phone.")
            check_page(page, width, "issue27-note-after-apply", problems)
        finally:
            context.close()
    assert problems == [], "\n".join(problems)


def test_a_builder_refusal_says_the_range_and_links_to_the_field(browser, live_server, agent, user):
    problems: list[str] = []
    for width in WIDTHS:
        context, page = new_page(browser, width)
        try:
            sign_in(page, live_server, user.username)
            page.goto(live_server.url + reverse("memory:tab", args=[agent.public_id]))
            toggle = page.locator("[data-testid=builder-toggle]")
            # The closed Builder button is in the page's flow, above the form: it covers nothing.
            assert toggle.evaluate("el => getComputedStyle(el.parentElement).position") == "static"
            toggle.click()
            page.fill("#builder-message", "Keep days to 0")
            page.click("[data-testid=builder-send]")
            log = page.locator("[data-testid=builder-log]")
            expect(log).to_contain_text("Keep for: give a whole number of days from 1 to 3650. Nothing changed.")
            page.fill("#builder-message", "forget about quiet minutes")
            page.click("[data-testid=builder-send]")
            expect(log).to_contain_text("is a setting, not something for memory to keep or leave out")
            check_page(page, width, "issue27-builder-refusal", problems)
            page.locator("[data-testid=builder-field-link]").last.click()
            assert page.url.endswith("#field-quietMinutes")
            expect(page.locator("textarea[name=instructions]")).to_have_value("")  # no instruction was made
        finally:
            context.close()
    assert problems == [], "\n".join(problems)


def test_versions_fit_a_phone(browser, live_server, agent, user):
    """The Versions table and a long diff scroll inside themselves; the page never scrolls sideways."""
    agent_services.agent_update(
        agent=agent, changes={"memorySettings": {"instructions": "Keep which office they work from. " * 5}}
    )
    agent_services.agent_update(agent=agent, changes={"instructions": "You are helpful. " * 30})
    problems: list[str] = []
    for width in WIDTHS:
        context, page = new_page(browser, width)
        try:
            sign_in(page, live_server, user.username)
            page.goto(live_server.url + reverse("agents:versions", args=[agent.public_id]))
            expect(page.locator("[data-testid=version-diff]")).to_be_visible()
            check_page(page, width, "issue27-versions", problems)
        finally:
            context.close()
    assert problems == [], "\n".join(problems)
