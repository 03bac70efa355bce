"""Every page passes the Content-Security-Policy in a real browser (Chromium): no inline script or
style is refused, htmx works with eval off, and the website chat draws and answers on a page (the
demo site) whose own policy is as strict as ours."""

import io

import pytest
from django.core.cache import cache
from django.core.management import call_command
from playwright.sync_api import expect

from agents.models import Agent, EndUser
from memory.store.services import memory_set

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WATCH = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', function (e) {
  window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline') + ' ' + (e.sourceFile || '') + ':' + e.lineNumber);
});
"""


@pytest.fixture
def watched(page):
    page.add_init_script(WATCH)
    console = []
    page.on("console", lambda msg: console.append(msg.text) if "Content Security Policy" in msg.text else None)
    return page, console


def violations(page, console):
    return page.evaluate("window.__csp || []") + console


def sign_in(page, live_server, email, password="pw-for-tests-1"):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", email)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/agents/**")


def test_the_app_pages_pass_the_csp(watched, live_server, agent, user):
    page, console = watched
    end_user = EndUser.objects.create(agent=agent, external_id="u_csp")
    memory_set(end_user=end_user, text="Prefers email over phone.")
    page.goto(f"{live_server.url}/accounts/login/")
    assert violations(page, console) == []
    sign_in(page, live_server, user.username)
    base = f"{live_server.url}/agents/{agent.public_id}"
    for path in ("/", "/memory/", f"/memory/people/{end_user.pk}/", "/versions/"):
        page.goto(base + path)
        expect(page.locator("main")).to_be_visible()
        assert violations(page, console) == [], path
    for url in (f"{live_server.url}/settings/api-keys/", f"{live_server.url}/accounts/password/change/"):
        page.goto(url)
        assert violations(page, console) == [], url

    # htmx with allowEval off: the Builder panel posts, answers and empties its box.
    page.goto(base + "/")
    page.click("[data-testid=builder-toggle]")
    page.fill("#builder-message", "what can you do?")
    page.click("[data-testid=builder-send]")
    expect(page.locator("[data-testid=builder-log]")).to_contain_text("what can you do?")
    expect(page.locator("#builder-message")).to_have_value("")
    # A confirm() from a static script: cancelling keeps the memory.
    page.goto(f"{base}/memory/people/{end_user.pk}/")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("[data-testid=delete-memory]")
    expect(page.locator("main")).to_contain_text("Prefers email over phone.")
    assert violations(page, console) == []
    # The watch itself works: an inline style put in now is refused and seen.
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<b style=\"color:red\">x</b>')")
    page.wait_for_function("() => window.__csp.length > 0")
    assert "style-src-attr" in violations(page, console)[0]


def test_the_api_docs_pass_the_csp(watched, live_server):
    page, console = watched
    page.goto(f"{live_server.url}/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("AgentNava Memory API")
    assert violations(page, console) == []


def test_the_website_chat_works_on_a_page_with_a_strict_csp(watched, live_server, db, settings):
    page, console = watched
    cache.clear()
    settings.DEMO = True
    call_command("seed_demo", "--force", stdout=io.StringIO())
    Agent.objects.get(team__slug="demo", name="Support")
    response = page.goto(f"{live_server.url}/demo/chat/?memory=off")
    assert "style-src 'self'" in response.headers["content-security-policy"]
    expect(page.locator("[data-an=panel]")).to_be_visible()
    # the chat's own style sheet applied inside its shadow root (retried: the sheet may land after the DOM)
    expect(page.locator("[data-an=panel]")).to_have_css("position", "fixed")
    page.fill("[data-an=input]", "Hi, can I get my invoice?")
    page.click("[data-an=send]")
    expect(page.locator("[data-an=message][data-role=agent]")).to_have_count(1)
    page.click("[data-testid=site-consent] button.primary")
    expect(page.locator("#site-consent-result")).to_contain_text("memory is on")
    assert violations(page, console) == []
    cache.clear()


def test_the_website_chat_works_on_another_origin_with_a_strict_csp(watched, live_server, agent, tmp_path):
    """A customer's page on another origin, whose own policy allows scripts and requests to our
    origin only, and no inline style at all: the chat draws, answers, and trips nothing."""
    import functools
    import http.server
    import threading
    from urllib.parse import urlsplit

    page, console = watched
    cache.clear()
    ours = live_server.url
    policy = f"default-src 'self'; script-src {ours}; connect-src {ours}; style-src 'self'; img-src 'self'"
    (tmp_path / "index.html").write_text(
        f"""<!doctype html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy}"><title>Shop</title></head>
<body><h1>A customer's shop</h1>
<script src="{ours}/embed/v1.js" data-agent-id="{agent.public_id}" data-open="true" defer></script></body></html>"""
    )
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        shop = f"http://localhost:{server.server_address[1]}/"
        assert urlsplit(shop).netloc != urlsplit(ours).netloc
        page.goto(shop)
        expect(page.locator("[data-an=panel]")).to_be_visible()
        expect(page.locator("[data-an=panel]")).to_have_css("position", "fixed")
        page.fill("[data-an=input]", "Hi, can I get my invoice?")
        page.click("[data-an=send]")
        expect(page.locator("[data-an=message][data-role=agent]")).to_have_count(1)
        assert violations(page, console) == []
    finally:
        server.shutdown()
        server.server_close()
        cache.clear()
