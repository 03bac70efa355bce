"""The API's docs page works offline in a real browser: every request stays on this server, the
operations are listed, and "Try it out" with a key calls the API."""

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from agents import services

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_docs_page_lists_the_operations_and_calls_the_api_offline(page, live_server, team, agent, tmp_path):
    _, raw = services.api_key_create(team=team, name="docs")
    ours = urlsplit(live_server.url).netloc
    left = []

    def only_this_server(route):
        if urlsplit(route.request.url).netloc == ours:
            route.continue_()
        else:
            left.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_server)
    page.goto(f"{live_server.url}/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("AgentNava Memory API")
    for summary in (
        "agent.get()",
        "agent.update({...})",
        "endUser.memory.set(text)",
        "agent.memories({limit, before})",
        "endUser.erase()",
    ):
        expect(page.get_by_text(summary, exact=True).first).to_be_visible()
    expect(page.get_by_text("memory_refused").first).to_be_attached()

    page.click("button.authorize")
    page.locator(".modal-ux input").first.fill(raw)
    page.locator(".modal-ux button.authorize").click()
    page.locator(".modal-ux button.close-modal").click()

    operation = page.locator("#operations-Agents-agent_get")
    operation.locator(".opblock-summary").click()
    operation.locator("button.try-out__btn").click()
    operation.locator("input[placeholder='agent_id']").fill(agent.public_id)
    operation.locator("button.execute").click()
    expect(operation.locator(".live-responses-table tbody .response-col_status").first).to_contain_text("200")
    expect(operation.locator(".live-responses-table")).to_contain_text(agent.public_id)
    page.screenshot(path=str(tmp_path / "api-docs.png"), full_page=True)
    assert left == []


def test_the_javascript_client_runs_in_a_browser(page, live_server, team, agent):
    """static/sdk/agentnava.js as an ES module in Chromium, on the server's own origin."""
    _, raw = services.api_key_create(team=team, name="browser")
    page.goto(f"{live_server.url}/healthz")
    result = page.evaluate(
        """async ([key, agentId]) => {
            const { AgentNava } = await import('/static/sdk/agentnava.js');
            const agent = new AgentNava({ apiKey: key, baseUrl: location.origin }).agent(agentId);
            const ananya = agent.endUser('u_ananya');
            await ananya.memory.set('Prefers email over phone.');
            const memory = await ananya.memory.get();
            let code = null;
            try { await ananya.memory.set('My card is 4111 1111 1111 1111.'); } catch (error) { code = error.code; }
            const page = await agent.memories({ limit: 50 });
            return { text: memory.text, code, listed: page.memories.map((m) => m.endUserId), notice: (await agent.get()).memorySettings.notice };
        }""",
        [raw, agent.public_id],
    )
    assert result["text"] == "Prefers email over phone."
    assert result["code"] == "memory_refused"
    assert result["listed"] == ["u_ananya"]
    assert "remembers" in result["notice"]
