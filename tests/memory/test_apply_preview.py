"""Apply's confirm step and preview (issue 15): how many memories, against which version; a
sample reviewed as Apply would, with the lines it would remove, and nothing saved."""

from django.urls import reverse

from memory.models import ApplyJob, MemoryRun
from tests.memory.seed import database_fingerprint
from tests.memory.test_apply import OFFICE, publish_leave_out_offices, seed


def test_the_confirm_step_counts_and_calls_no_model(member_client, agent):
    seed(agent, n_office=3, n_contact=2)
    publish_leave_out_offices(agent)
    page = member_client.get(reverse("memory:apply_confirm", args=[agent.public_id])).content.decode()
    assert 'data-testid="apply-count">5 memories' in page and "version 2" in page
    assert "Do not keep office locations." in page
    assert not ApplyJob.objects.exists()


def test_the_preview_shows_what_a_sample_would_lose_and_saves_nothing(member_client, agent):
    seed(agent, n_office=3, n_contact=4)
    publish_leave_out_offices(agent)
    before = database_fingerprint()
    runs = MemoryRun.objects.count()
    page = member_client.post(reverse("memory:apply_confirm", args=[agent.public_id])).content.decode()
    summary = page.split('data-testid="apply-preview-summary">')[1].split("</p>")[0]
    # The newest five: four contact-only memories (unchanged) and one with an office line.
    assert "Would change 1 of the 5 newest memories" in summary and "(7 in all)" in summary
    office_line = OFFICE.splitlines()[0]
    assert page.count('data-status="removed"') == 1 and office_line in page
    assert database_fingerprint() == before and MemoryRun.objects.count() == runs
    assert not ApplyJob.objects.exists()


def test_people_filters_those_the_last_apply_changed(member_client, agent):
    seed(agent, n_office=2, n_contact=2)
    publish_leave_out_offices(agent)
    response = member_client.post(reverse("memory:apply", args=[agent.public_id]), HTTP_HX_REQUEST="true")
    assert 'data-testid="apply-changed-people"' in response.content.decode()
    page = member_client.get(reverse("memory:people", args=[agent.public_id]), {"show": "apply"}).content.decode()
    assert "u_office_0" in page and "u_office_1" in page and "u_contact_0" not in page
    assert "1&ndash;2 of 2" in page
