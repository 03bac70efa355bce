"""Try in a real browser with a real cluster: the button POSTs, the page polls the job (htmx, under
the CSP) from "waiting" to the result, and Cancel is there while it runs."""

from datetime import timedelta

import pytest
from django_q.conf import Conf
from playwright.sync_api import expect

from memory.models import TrialJob
from tests.cluster import start_cluster, stop_cluster
from tests.memory.seed import T0, chat

pytestmark = [pytest.mark.browser, pytest.mark.cluster, pytest.mark.django_db(transaction=True)]


def test_try_runs_as_a_job_and_the_page_follows_it(page, live_server, agent, user, tmp_path, monkeypatch):
    for i in range(3):
        chat(
            agent,
            f"u_{i}",
            [("user", "I work from the Pune office."), ("user", "I prefer email over phone.")],
            start=T0 + timedelta(hours=i),
        )
    monkeypatch.setattr(Conf, "SYNC", False)  # the job goes to the queue; a real cluster runs it
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/agents/{agent.public_id}/memory/")
    page.click("[data-testid=try]")
    expect(page.locator("[data-testid=try-result]")).to_have_attribute("data-status", "queued")
    expect(page.locator("[data-testid=try-cancel]")).to_be_visible()
    assert TrialJob.objects.get().status == "queued"
    cluster, log = start_cluster(tmp_path / "qcluster.log")
    try:
        expect(page.locator("[data-testid=try-result]")).to_have_attribute("data-status", "done", timeout=60_000)
        expect(page.locator("[data-testid=try-person]")).to_have_count(3)
        expect(page.locator("[data-testid=nothing-saved]")).to_contain_text("Nothing was saved.")
    finally:
        stop_cluster(cluster, log)
