"""Apply to what is already kept (R19): a background job that reviews every memory against the
published instructions, in batches, resumable, cancellable, never adding a line."""

import pytest
from django.test import Client
from django.urls import reverse
from django_q.conf import Conf

from agents import services as agent_services
from agents.engines import EngineError, OfflineEngine
from agents.errors import AppError
from agents.models import Plan
from memory.models import ApplyJob, Memory, MemoryRun
from memory.store import services
from memory.tools import apply
from tests.conftest import make_team
from tests.fake_openai import chat_json
from tests.memory.seed import remembered

OFFICE = "Works from the Pune office.\nPrefers email over phone."
CONTACT = "Prefers email over phone."


def seed(agent, n_office=6, n_contact=4):
    for i in range(n_office):
        remembered(agent, f"u_office_{i}", OFFICE)
    for i in range(n_contact):
        remembered(agent, f"u_contact_{i}", CONTACT)


def publish_leave_out_offices(agent):
    agent_services.agent_update(
        agent=agent, changes={"memorySettings": {"instructions": "Do not keep office locations."}}
    )


@pytest.fixture
def queued(monkeypatch):
    """Queue tasks in the ORM broker instead of running them inline, so a test drives each step."""
    monkeypatch.setattr(Conf, "SYNC", False)


class CountingEngine:
    """The offline engine, with a hook before each answer (to crash, or to race a team edit)."""

    name = "offline"

    def __init__(self, before=None):
        self.inner = OfflineEngine()
        self.calls = 0
        self.before = before

    def structured(self, **kwargs):
        self.calls += 1
        if self.before:
            self.before(self.calls, kwargs["payload"])
        return self.inner.structured(**kwargs)


def test_apply_reviews_every_memory_against_the_published_version_and_adds_nothing(agent, user):
    seed(agent)
    before = {m.pk: m.lines for m in Memory.objects.filter(agent=agent)}
    publish_leave_out_offices(agent)
    job = apply.apply_start(agent=agent, user=user)  # the test settings run the task inline
    job.refresh_from_db()
    assert job.status == "done" and job.version.number == 2
    assert (job.total, job.reviewed, job.changed, job.replaced, job.removed, job.failed) == (10, 10, 6, 0, 6, 0)
    for memory in Memory.objects.filter(agent=agent):
        assert set(memory.lines) <= set(before[memory.pk])  # never a line added
        assert memory.lines == ["Prefers email over phone."]
    runs = MemoryRun.objects.filter(kind="apply")
    assert runs.count() == 6  # one audit row per changed memory, none for the unchanged
    assert {(r.added, r.replaced, r.removed, r.status, r.actor_id) for r in runs} == {(0, 0, 1, "succeeded", user.pk)}
    assert set(runs.values_list("memory__end_user__external_id", flat=True)) == {f"u_office_{i}" for i in range(6)}


def test_a_model_that_adds_a_line_is_refused_and_counted(agent, user, openai_engine):
    remembered(agent, "u_1", CONTACT)
    openai_engine.default = chat_json(
        {
            "operations": [
                {"op": "keep", "line": 1, "text": None, "sources": []},
                {"op": "add", "line": None, "text": "Works from the Delhi office.", "sources": []},
            ]
        }
    )
    job = apply.apply_start(agent=agent, user=user)
    job.refresh_from_db()
    assert (job.status, job.reviewed, job.changed) == ("done", 1, 0)
    assert job.dropped == {"added_in_review": 1}
    assert Memory.objects.get().lines == [CONTACT]
    assert not MemoryRun.objects.filter(kind="apply").exists()


def test_a_replacement_holding_a_card_number_is_dropped_by_the_guards(agent, user, openai_engine):
    remembered(agent, "u_1", CONTACT)
    openai_engine.default = chat_json(
        {
            "operations": [
                {"op": "replace", "line": 1, "text": "Pays with card 4111 1111 1111 1111.", "sources": []},
            ]
        }
    )
    job = apply.apply_start(agent=agent, user=user)
    job.refresh_from_db()
    assert job.dropped == {"card_number": 1} and job.changed == 0
    assert Memory.objects.get().lines == [CONTACT]


def test_the_job_works_in_steps_and_goes_on_from_its_cursor(agent, user, queued):
    seed(agent, n_office=3, n_contact=2)
    publish_leave_out_offices(agent)
    job = apply.apply_start(agent=agent, user=user)
    assert job.status == "queued"
    # budget 0: each step finishes one memory, then hands over (here: we call the next step).
    assert apply.apply_job_step(job.pk, budget_seconds=0, enqueue_next=False) == "continued"
    job.refresh_from_db()
    assert (job.status, job.reviewed) == ("running", 1)
    first_cursor = job.cursor
    assert first_cursor == Memory.objects.filter(agent=agent).order_by("id").first().pk
    while apply.apply_job_step(job.pk, budget_seconds=0, enqueue_next=False) == "continued":
        pass
    job.refresh_from_db()
    assert (job.status, job.reviewed, job.changed, job.removed) == ("done", 5, 3, 3)
    # A late second delivery of a step finds nothing to do.
    assert apply.apply_job_step(job.pk) == "done"
    assert MemoryRun.objects.filter(kind="apply").count() == 3


def test_after_a_crash_the_job_resumes_and_reviews_no_memory_twice(agent, user, queued):
    seed(agent, n_office=8, n_contact=0)
    publish_leave_out_offices(agent)
    job = apply.apply_start(agent=agent, user=user)

    def crash_on_the_fourth(call, payload):
        if call == 4:
            raise RuntimeError("the worker died")

    with pytest.raises(RuntimeError):
        apply.apply_job_step(job.pk, engine=CountingEngine(before=crash_on_the_fourth), enqueue_next=False)
    job.refresh_from_db()
    assert (job.status, job.reviewed, job.changed) == ("running", 3, 3)
    engine = CountingEngine()
    assert apply.apply_job_step(job.pk, engine=engine, enqueue_next=False) == "done"
    assert engine.calls == 5  # only the five not yet reviewed
    job.refresh_from_db()
    assert (job.reviewed, job.changed, job.removed) == (8, 8, 8)
    runs = MemoryRun.objects.filter(kind="apply")
    assert runs.count() == 8 and len(set(runs.values_list("memory_id", flat=True))) == 8


def test_a_memory_the_team_changes_while_it_is_reviewed_keeps_the_teams_words(agent, user, queued):
    remembered(agent, "u_1", OFFICE)
    publish_leave_out_offices(agent)
    job = apply.apply_start(agent=agent, user=user)

    def team_edits_meanwhile(call, payload):
        services.memory_set(end_user=Memory.objects.get().end_user, text="Works from the Pune office, 2nd floor.")

    apply.apply_job_step(job.pk, engine=CountingEngine(before=team_edits_meanwhile), enqueue_next=False)
    job.refresh_from_db()
    assert (job.status, job.reviewed, job.changed) == ("done", 1, 0)
    assert Memory.objects.get().lines == ["Works from the Pune office, 2nd floor."]
    assert not MemoryRun.objects.filter(kind="apply").exists()


def test_cancel_stops_a_queued_job_at_once_and_a_running_one_between_memories(agent, user, queued):
    seed(agent, n_office=3, n_contact=0)
    publish_leave_out_offices(agent)
    job = apply.apply_start(agent=agent, user=user)
    job = apply.apply_cancel(job=job)
    assert job.status == "cancelled" and job.reviewed == 0
    assert apply.apply_job_step(job.pk) == "cancelled"
    assert not MemoryRun.objects.filter(kind="apply").exists()

    job = apply.apply_start(agent=agent, user=user)
    apply.apply_job_step(job.pk, budget_seconds=0, enqueue_next=False)
    apply.apply_cancel(job=job)
    assert apply.apply_job_step(job.pk) == "cancelled"
    job.refresh_from_db()
    assert (job.status, job.reviewed, job.changed) == ("cancelled", 1, 1)
    assert job.finished_at is not None
    assert sum(1 for m in Memory.objects.all() if "Works from the Pune office." in m.lines) == 2


def test_one_apply_at_a_time_per_agent(agent, user, queued):
    remembered(agent, "u_1", CONTACT)
    apply.apply_start(agent=agent, user=user)
    with pytest.raises(AppError) as refused:
        apply.apply_start(agent=agent, user=user)
    assert refused.value.code == "apply_running"
    assert ApplyJob.objects.filter(agent=agent).count() == 1


def test_a_model_outage_stops_the_job_and_resume_goes_on(agent, user, queued):
    seed(agent, n_office=7, n_contact=0)
    publish_leave_out_offices(agent)
    job = apply.apply_start(agent=agent, user=user)

    def down(call, payload):
        raise EngineError("The model server could not be reached.", code="model_unreachable")

    assert apply.apply_job_step(job.pk, engine=CountingEngine(before=down), enqueue_next=False) == "failed"
    job.refresh_from_db()
    assert (job.status, job.failed, job.reviewed) == ("failed", 5, 0)
    assert "model_unreachable" in job.error
    failed_runs = MemoryRun.objects.filter(kind="apply", status="failed")
    assert failed_runs.count() == 5 and set(failed_runs.values_list("error", flat=True)) == {"model_unreachable"}
    assert all("Works from the Pune office." in m.lines for m in Memory.objects.all())
    assert job.unreviewed == 7
    # Resume queues the next step; the five that failed are reviewed again, then it goes on from the cursor.
    job = apply.apply_resume(job=job)
    assert job.status == "running" and job.error == ""
    assert apply.apply_job_step(job.pk) == "done"
    job.refresh_from_db()
    assert (job.failed, job.reviewed, job.changed, job.unreviewed) == (0, 7, 7, 0)


def test_only_a_stalled_or_stopped_job_can_be_resumed(agent, user, queued):
    remembered(agent, "u_1", CONTACT)
    job = apply.apply_start(agent=agent, user=user)
    with pytest.raises(AppError) as refused:
        apply.apply_resume(job=job)
    assert refused.value.code == "apply_not_resumable"
    ApplyJob.objects.filter(pk=job.pk).update(created_at=job.created_at - apply.STALLED_AFTER * 2)
    job.refresh_from_db()
    assert apply.apply_is_stalled(job)
    assert apply.apply_resume(job=job).pk == job.pk


def test_apply_needs_a_plan_with_memory(db):
    team, owner = make_team("smallco", plan=Plan.FREE)
    agent = agent_services.agent_create(team=team, name="Helper")
    with pytest.raises(AppError) as refused:
        apply.apply_start(agent=agent, user=owner)
    assert refused.value.code == "plan_required"


# --- The pages -------------------------------------------------------------------------------


def test_the_apply_button_runs_the_job_and_shows_the_summary(member_client, agent):
    seed(agent, n_office=2, n_contact=1)
    publish_leave_out_offices(agent)
    response = member_client.post(reverse("memory:apply", args=[agent.public_id]), HTTP_HX_REQUEST="true")
    page = response.content.decode()
    assert 'data-status="done"' in page
    assert "3 reviewed · 2 changed · 0 lines replaced · 2 removed · 0 added" in page
    tab = member_client.get(reverse("memory:tab", args=[agent.public_id])).content.decode()
    assert "3 reviewed · 2 changed" in tab


def test_a_running_job_polls_shows_progress_and_can_be_cancelled(member_client, agent, user, queued):
    seed(agent, n_office=4, n_contact=0)
    job = apply.apply_start(agent=agent, user=user)
    apply.apply_job_step(job.pk, budget_seconds=0, enqueue_next=False)
    status = reverse("memory:apply_status", args=[agent.public_id, job.pk])
    page = member_client.get(status, HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 1s"' in page and 'value="1"' in page and "25%" in page
    page = member_client.post(
        reverse("memory:apply_cancel", args=[agent.public_id, job.pk]), HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Cancelling" in page
    apply.apply_job_step(job.pk)
    # The poll that sees the end swaps only the card (no reload: nothing typed elsewhere is lost).
    ended = member_client.get(status + "?poll=1", HTTP_HX_REQUEST="true")
    assert ended.headers.get("HX-Refresh") is None and 'data-status="cancelled"' in ended.content.decode()
    page = member_client.get(status, HTTP_HX_REQUEST="true").content.decode()
    assert 'data-status="cancelled"' in page and "every 1s" not in page
    # Without htmx the status is a page of its own.
    assert "Apply to what is already kept" in member_client.get(status).content.decode()


def test_apply_urls_are_only_for_the_agents_team(agent, user, other_team, queued):
    remembered(agent, "u_1", CONTACT)
    job = apply.apply_start(agent=agent, user=user)
    client = Client()
    client.force_login(other_team[1])
    assert client.post(reverse("memory:apply", args=[agent.public_id])).status_code == 404
    assert client.get(reverse("memory:apply_status", args=[agent.public_id, job.pk])).status_code == 404
    assert client.post(reverse("memory:apply_cancel", args=[agent.public_id, job.pk])).status_code == 404
    assert client.post(reverse("memory:apply_resume", args=[agent.public_id, job.pk])).status_code == 404
    job.refresh_from_db()
    assert job.status == "queued" and not job.cancel_requested


def test_apply_records_a_batch_of_reviews_in_a_fixed_number_of_statements(agent, user, queued):
    """Issue 14: a batch's reviews are recorded together (job, memories, audit rows), so 100,000
    memories take minutes, not hours. Three memories and twelve take the same statements."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = {}
    for n in (3, 12):
        Memory.objects.filter(agent=agent).delete()
        seed(agent, n_office=n, n_contact=0)
        agent_services.agent_update(
            agent=agent, changes={"memorySettings": {"instructions": f"Do not keep office locations ({n})."}}
        )
        job = apply.apply_start(agent=agent, user=user)
        with CaptureQueriesContext(connection) as queries:
            assert apply.apply_job_step(job.pk, enqueue_next=False) == "done"
        job.refresh_from_db()
        assert (job.reviewed, job.changed) == (n, n)
        assert MemoryRun.objects.filter(kind="apply", memory__agent=agent).count() == n
        counts[n] = len(queries.captured_queries)
    assert counts[3] == counts[12], counts
