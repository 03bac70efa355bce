"""Try as a background job (issue 12): a POST starts it, never a GET; a task tries the people one
by one (progress), the page shows the result, Cancel stops it, one runs at a time per agent, a
second delivery repeats nothing, an erase takes a person's rows with it, and a real cluster runs it."""

import time
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django_q.conf import Conf

from agents import services as agent_services
from agents.errors import AppError
from memory.models import TrialJob, TrialJobPerson
from memory.store import services
from memory.tools import trial_jobs
from tests.cluster import start_cluster, stop_cluster
from tests.fake_openai import chat_json
from tests.memory.seed import T0, chat

OFFICE_CHAT = [("user", "I work from the Pune office."), ("user", "Please email me, I prefer email over phone.")]


def try_url(agent):
    return reverse("memory:try", args=[agent.public_id])


def people(agent, n):
    for i in range(n):
        chat(agent, f"u_{i}", OFFICE_CHAT, start=T0 + timedelta(hours=i))


def test_a_get_never_starts_a_try_or_calls_a_model(member_client, agent, openai_engine):
    people(agent, 3)
    openai_engine.requests.clear()
    for query in ("", "?n=5", "?n=20"):
        response = member_client.get(try_url(agent) + query)
        assert response.status_code == 200 and 'data-testid="try-none"' in response.content.decode()
    assert openai_engine.requests == [] and not TrialJob.objects.exists()


def test_try_needs_the_csrf_token(agent, user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(try_url(agent), {"n": "5"}).status_code == 403
    assert not TrialJob.objects.exists()


def test_a_post_starts_the_job_and_the_result_page_shows_it(member_client, agent, user):
    people(agent, 3)
    response = member_client.post(try_url(agent), {"n": "5"})
    job = TrialJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "memory:try_status", args=[agent.public_id, job.pk]
    )
    assert (job.status, job.done, job.total, job.people, job.created_by) == (
        "done",
        3,
        3,
        5,
        user,
    )  # the test queue runs inline
    page = member_client.get(response["Location"]).content.decode()
    assert page.count('data-testid="try-person"') == 3 and 'data-status="done"' in page
    # The Try page shows the latest job, without calling anything.
    assert page.count('data-testid="try-person"') == member_client.get(try_url(agent)).content.decode().count(
        'data-testid="try-person"'
    )


def test_the_job_goes_person_by_person_and_a_second_delivery_repeats_nothing(agent, openai_engine):
    openai_engine.default = chat_json({"operations": []})
    people(agent, 4)
    job = TrialJob.objects.create(
        agent=agent,
        config=agent_services.agent_draft_config(agent),
        people=4,
        end_user_ids=[e.pk for e in agent.end_users.order_by("-last_chat_at")],
        as_of=timezone.now(),
        created_at=timezone.now(),
    )
    assert trial_jobs.trial_job_step(job.pk, budget_seconds=0, enqueue_next=False) == "continued"
    job.refresh_from_db()
    assert (job.status, job.done, job.persons.count()) == ("running", 1, 1)
    per_person = len(openai_engine.requests)  # the first person's model calls
    assert trial_jobs.trial_job_step(job.pk, enqueue_next=False) == "done"
    job.refresh_from_db()
    assert (job.status, job.done, job.persons.count(), job.percent) == ("done", 4, 4, 100)
    assert len(openai_engine.requests) == 4 * per_person  # the other three, the first not again
    assert trial_jobs.trial_job_step(job.pk, enqueue_next=False) == "done"  # delivered again: nothing more
    assert len(openai_engine.requests) == 4 * per_person
    assert TrialJobPerson.objects.filter(job=job).count() == 4


def test_cancel_stops_between_people(member_client, agent):
    people(agent, 3)
    job = TrialJob.objects.create(
        agent=agent,
        config=agent_services.agent_draft_config(agent),
        people=3,
        end_user_ids=list(agent.end_users.values_list("pk", flat=True)),
        as_of=timezone.now(),
        created_at=timezone.now(),
    )
    trial_jobs.trial_job_step(job.pk, budget_seconds=0, enqueue_next=False)
    response = member_client.post(reverse("memory:try_cancel", args=[agent.public_id, job.pk]))
    assert response.status_code == 302
    assert trial_jobs.trial_job_step(job.pk, enqueue_next=False) == "cancelled"
    job.refresh_from_db()
    assert (job.status, job.done, job.persons.count()) == ("cancelled", 1, 1)
    assert "cancelled" in member_client.get(response["Location"]).content.decode()


def test_a_queued_job_cancels_at_once_and_one_try_runs_at_a_time(agent, user):
    job = TrialJob.objects.create(agent=agent, config={}, people=5, as_of=timezone.now(), created_at=timezone.now())
    with pytest.raises(AppError, match="already running"):
        trial_jobs.trial_start(
            agent=agent, config=agent_services.agent_draft_config(agent), draft=False, people=5, user=user
        )
    assert trial_jobs.trial_cancel(job=job).status == "cancelled"
    assert (
        trial_jobs.trial_start(
            agent=agent, config=agent_services.agent_draft_config(agent), draft=False, people=5
        ).status
        == "done"
    )


def test_a_stalled_try_gives_way_to_a_new_one(agent):
    old = timezone.now() - timedelta(hours=1)
    stalled = TrialJob.objects.create(
        agent=agent, config={}, people=5, status="running", as_of=old, created_at=old, heartbeat_at=old
    )
    new = trial_jobs.trial_start(agent=agent, config=agent_services.agent_draft_config(agent), draft=False, people=5)
    stalled.refresh_from_db()
    assert stalled.status == "failed" and new.status == "done"


def test_only_the_newest_jobs_are_kept(agent):
    for _ in range(trial_jobs.KEEP_JOBS + 3):
        trial_jobs.trial_start(agent=agent, config=agent_services.agent_draft_config(agent), draft=False, people=5)
    assert TrialJob.objects.filter(agent=agent).count() == trial_jobs.KEEP_JOBS + 1


def test_an_erase_takes_the_persons_try_rows(agent):
    people(agent, 2)
    job = trial_jobs.trial_start(agent=agent, config=agent_services.agent_draft_config(agent), draft=False, people=5)
    assert job.persons.count() == 2
    services.end_user_erase(end_user=agent.end_users.get(external_id="u_0"))
    assert [p.end_user.external_id for p in trial_jobs.trial_people(job)] == ["u_1"]


def test_another_team_sees_no_try_job(agent, other_team):
    job = trial_jobs.trial_start(agent=agent, config=agent_services.agent_draft_config(agent), draft=False, people=5)
    client = Client()
    client.force_login(other_team[1])
    assert client.get(reverse("memory:try_status", args=[agent.public_id, job.pk])).status_code == 404
    assert client.post(reverse("memory:try_cancel", args=[agent.public_id, job.pk])).status_code == 404


@pytest.mark.cluster
@pytest.mark.django_db(transaction=True)
def test_a_real_cluster_runs_the_try(agent, user, tmp_path, monkeypatch):
    people(agent, 3)
    monkeypatch.setattr(Conf, "SYNC", False)
    job = trial_jobs.trial_start(
        agent=agent, config=agent_services.agent_draft_config(agent), draft=False, people=5, user=user
    )
    assert job.status == "queued"
    cluster, log = start_cluster(tmp_path / "qcluster.log")
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            job.refresh_from_db()
            if not job.is_active:
                break
            assert cluster.poll() is None, (tmp_path / "qcluster.log").read_text()[-2000:]
            time.sleep(0.5)
        assert (job.status, job.done, job.persons.count()) == ("done", 3, 3), (tmp_path / "qcluster.log").read_text()[
            -2000:
        ]
    finally:
        stop_cluster(cluster, log)


def test_try_names_chats_still_open_and_reads_them_when_asked(member_client, agent):
    """Issue 15: Try says which chats it could not read (still inside their quiet window) and can
    include them; a real run would wait for them to go quiet."""
    chat(agent, "u_open", [("user", "I work from the Pune office.")], start=T0)
    chat(
        agent,
        "u_open",
        [("user", "Please email me, I prefer email over phone.")],
        start=timezone.now() - timedelta(minutes=3),
    )
    member_client.post(try_url(agent), {"n": "5"})
    job = TrialJob.objects.get()
    page = member_client.get(reverse("memory:try_status", args=[agent.public_id, job.pk])).content.decode()
    result = TrialJobPerson.objects.get(job=job).result
    assert result["openChats"] == 1 and result["messagesRead"] == 1
    assert 'data-testid="try-open-chats"' in page and "1 chat still inside its quiet window" in page
    assert not job.include_open

    member_client.post(try_url(agent), {"n": "5", "include_open": "1"})
    again = TrialJob.objects.order_by("-pk").first()
    result = TrialJobPerson.objects.get(job=again).result
    assert again.include_open and result["openChats"] == 0 and result["messagesRead"] == 2
    page = member_client.get(reverse("memory:try_status", args=[agent.public_id, again.pk])).content.decode()
    assert 'data-testid="try-open-chats"' not in page and "Chats still open were read too." in page
