"""Every page of the app, and its states, at 1280 and 390 px in Debian's Chromium: axe-core finds
no serious or critical violation, nothing scrolls sideways on a phone, and a screenshot of each
is written to artifacts/screenshots/<width>/ (a folder CI keeps). Then the bugs of issue 15 one by
one, as a team member meets them."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from agents import access
from agents import services as agent_services
from agents import team as team_services
from agents.models import Conversation
from consent.services import consent_set
from memory.models import MemoryRun
from memory.store import services
from memory.tools import apply as memory_apply
from surfaces.embed.services import conversation_memory_switch_off
from tests.browser.pages import WIDTHS, check_page, new_page
from tests.memory.seed import T0, chat, remembered

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def sign_in(page, live_server, email, password="pw-for-tests-1"):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", email)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_be_visible()


def seed(agent, user):
    """People in every state, a chat switched off midway, runs for the chart, and a draft that
    opens a category with ask first off (a publish warning)."""
    ananya = remembered(
        agent, "u_ananya", "Prefers email over phone.\nWorks from the Pune office.\nSpeaks Hindi.", actor=user
    )
    consent_set(end_user=ananya.end_user, agreed=True, source="api")
    conversation, _ = chat(
        agent,
        "u_ananya",
        [("user", "Hi, I need my invoice."), ("agent", "Here it is."), ("action", "renew_plan", "succeeded")],
    )
    conversation_memory_switch_off(conversation=Conversation.objects.get(pk=conversation.pk))
    stopped = remembered(agent, "u_ravi", "Speaks Tamil.")
    services.memory_stop(end_user=stopped.end_user)
    chat(agent, "u_visitor_only", [("user", "Just looking.")], start=T0)
    for i in range(4):
        remembered(agent, f"u_bulk_{i}", "Prefers phone calls.")
    MemoryRun.objects.create(memory=ananya, kind="quiet", status="failed", started_at=T0)
    agent_services.agent_draft_update(
        agent=agent, changes={"memorySettings": {"instructions": "Keep food allergies.", "quietMinutes": 30}}, user=user
    )
    return ananya, conversation


def test_every_page_and_state_passes_axe_fits_a_phone_and_is_photographed(browser, live_server, agent, user):
    ananya, conversation = seed(agent, user)
    pid, eu = agent.public_id, ananya.end_user_id

    def url(name, *args):
        return live_server.url + reverse(name, args=args)

    links = []
    team_services.invitation_create(
        team=agent.team,
        email="priya@example.com",
        actor=access.actor_for_user(agent.team, user),
        link_for=lambda token: links.append(url("agents:invitation", token)) or links[-1],
    )
    invitation_link = links[0]
    job = memory_apply.apply_start(agent=agent, user=user)  # runs inline here: a finished Apply
    problems: list[str] = []
    for width in WIDTHS:
        context, page = new_page(browser, width)
        try:
            page.goto(f"{live_server.url}/accounts/login/")
            check_page(page, width, "sign-in", problems)
            page.goto(invitation_link)
            check_page(page, width, "invitation", problems)
            page.goto(f"{live_server.url}/invitations/not-a-token/")
            check_page(page, width, "invitation-expired", problems)
            page.goto(live_server.url + reverse("password_reset"))
            check_page(page, width, "password-reset", problems)
            sign_in(page, live_server, user.username)
            pages = [
                ("agents", live_server.url + reverse("agents:home") + "?all=1"),
                ("overview", url("agents:overview", pid)),
                ("memory-settings", url("memory:tab", pid)),
                ("memory-people", url("memory:people", pid)),
                ("memory-activity", url("memory:activity", pid)),
                ("apply-confirm", url("memory:apply_confirm", pid)),
                ("one-memory", url("memory:detail", pid, eu)),
                ("erase-confirm", url("memory:erase", pid, eu)),
                ("transcript", url("memory:transcript", pid, conversation.public_id)),
                ("versions", url("agents:versions", pid)),
                ("api-keys", url("agents:api_keys")),
                ("team", url("agents:team")),
                ("audit-log", url("agents:audit_log")),
                ("webhooks", live_server.url + reverse("webhooks:webhooks")),
                ("apply-status", url("memory:apply_status", pid, job.pk)),
                ("password-change", live_server.url + reverse("password_change")),
            ]
            for name, address in pages:
                page.goto(address)
                check_page(page, width, name, problems)
            # States within pages.
            page.goto(url("memory:tab", pid))
            page.fill("input[name=privacyUrl]", "not a web address")
            page.click("[data-testid=save-settings]")
            expect(page.locator("[data-testid=error-privacyUrl]")).to_be_visible()
            check_page(page, width, "memory-settings-refused", problems)
            page.click("[data-testid=builder-toggle]")
            expect(page.locator("#builder-message")).to_be_focused()
            check_page(page, width, "builder-open", problems)
            page.goto(url("memory:detail", pid, eu))
            page.locator("[data-testid=edit-line]").first.click()
            expect(page.locator("[data-testid=line-input]")).to_be_focused()
            check_page(page, width, "line-editing", problems)
            page.fill("[data-testid=line-input]", "Card 4111 1111 1111 1111")
            page.keyboard.press("Enter")
            expect(page.locator("[data-testid=refused]")).to_be_visible()
            check_page(page, width, "line-refused", problems)
            page.goto(url("memory:apply_confirm", pid))
            page.click("[data-testid=apply-preview]")
            expect(page.locator("[data-testid=apply-preview-summary]")).to_contain_text("Nothing was saved.")
            check_page(page, width, "apply-preview", problems)
            page.goto(url("memory:people", pid) + "?show=stopped")
            check_page(page, width, "memory-people-stopped", problems)
            page.goto(url("memory:tab", pid) + "?q=x")
            page.click("[data-testid=try]")
            expect(page.locator("[data-testid=try-page]")).to_be_visible()
            check_page(page, width, "try", problems)
        finally:
            context.close()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_issue_15_bugs_as_a_team_member_meets_them(browser, live_server, agent, user, width):
    ananya, conversation = seed(agent, user)
    pid = agent.public_id
    stay = {"on_leave": True}

    def dialogs(dialog):
        # Confirm steps are accepted; leaving with unsaved edits is refused (stay on the page) while asked to.
        dialog.dismiss() if dialog.type == "beforeunload" and stay["on_leave"] else dialog.accept()

    context, page = new_page(browser, width, dialogs=dialogs)
    try:
        sign_in(page, live_server, user.username)
        tab = live_server.url + reverse("memory:tab", args=[pid])
        page.goto(tab)
        # 11: the draft bar keeps "30 -> 15"-style changes on one line.
        change = page.locator("#draft-bar .change", has_text="quiet minutes 15 -> 30")
        expect(change).to_have_css("white-space", "nowrap")
        # Publish warns about the opened category before publishing.
        expect(page.locator("[data-testid=publish-warning]")).to_contain_text("ask first is off")
        # 7: ticking ask first updates the consent check at once.
        checks = page.locator("[data-testid=instruction-checks]")
        expect(checks).to_contain_text("Ask first is recommended")
        page.check("[data-testid=ask-first]")
        expect(checks).to_contain_text("Ask first is on.")
        # 2: a server-side refusal keeps every typed field and speaks the form's words beside the field.
        page.fill("textarea[name=instructions]", "Keep food allergies. Keep their favourite colour.")
        page.fill("input[name=keepForDays]", "45")
        page.fill("input[name=privacyUrl]", "ftp://example.com/privacy")
        page.click("[data-testid=save-settings]")
        expect(page.locator("[data-testid=error-privacyUrl]")).to_contain_text("Privacy policy: give a web address")
        expect(page.locator("textarea[name=instructions]")).to_have_value(
            "Keep food allergies. Keep their favourite colour."
        )
        expect(page.locator("input[name=keepForDays]")).to_have_value("45")
        expect(page.locator("input[name=privacyUrl]")).to_have_value("ftp://example.com/privacy")
        expect(page.locator("[data-testid=ask-first]")).to_be_checked()
        expect(page.locator("body")).not_to_contain_text("privacyUrl must")
        # The switch says its state in words.
        state = page.locator("[data-testid=switch-state]")
        expect(state).to_contain_text("On:")
        page.locator("label.switch").click()
        expect(state).to_contain_text("Off:")
        # 1: unsaved edits are not lost silently: leaving asks first (beforeunload).
        with page.expect_event("dialog") as leaving:
            page.click("nav.tabs >> text=Versions")
        assert leaving.value.type == "beforeunload"
        expect(page.locator("input[name=keepForDays]")).to_have_value("45")
        stay["on_leave"] = False
        # 9: the count follows a search, and Older changes the address.
        page.goto(live_server.url + reverse("memory:people", args=[pid]))
        count = page.locator("[data-testid=people-count]")
        expect(count).to_have_text("1–7 of 7")
        page.fill("[data-testid=people-search]", "ananya")
        expect(count).to_contain_text("1–1 of 1")
        page.wait_for_url("**q=ananya**")
        page.reload()
        expect(page.locator("[data-testid=memory-row]")).to_have_count(1)
        # 4: the embed snippet is absolute and can be copied.
        page.goto(live_server.url + reverse("agents:overview", args=[pid]))
        expect(page.locator("[data-testid=embed-snippet]")).to_contain_text(f'src="{live_server.url}/embed/v1.js"')
        page.click("[data-testid=copy-snippet]")
        expect(page.locator("[data-testid=copy-snippet]")).to_have_text("Copied")
        # 5: the conversation says when memory was switched off mid-chat.
        page.goto(live_server.url + reverse("memory:transcript", args=[pid, conversation.public_id]))
        expect(page.locator("[data-testid=conversation-memory]")).to_contain_text("used until")
        # 10: a refused edit says why once, and the box is cleared, not the old text.
        page.goto(live_server.url + reverse("memory:detail", args=[pid, ananya.end_user_id]))
        page.locator("[data-testid=edit-line]").first.click()
        page.fill("[data-testid=line-input]", "Card 4111 1111 1111 1111")
        page.click("[data-testid=save-line]")
        refused = page.locator("[data-testid=refused]")
        expect(refused).to_contain_text("looks like a card number")
        assert refused.inner_text().count("card number") == 1
        expect(page.locator("[data-testid=line-input]")).to_have_value("")
        # Escape cancels the edit; the line is unchanged.
        page.locator("[data-testid=line-input]").press("Escape")
        expect(page.locator("[data-testid=line-input]")).to_have_count(0)
        expect(page.locator("[data-testid=memory-line]").first).to_contain_text("Prefers email over phone.")
        # Add a line, through the same guards.
        page.fill("[data-testid=add-line-input]", "Prefers mornings.")
        page.click("[data-testid=add-line]")
        expect(page.locator("#lines")).to_contain_text("Line 4 added.")
        expect(page.locator("[data-testid=memory-line]")).to_have_count(4)
        # 11: a favicon, no 404.
        response = page.request.get(live_server.url + "/static/favicon.svg")
        assert response.ok
    finally:
        context.close()
