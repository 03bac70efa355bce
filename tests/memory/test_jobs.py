"""One job framework for Try and Apply (issue 26): the same table names and database constraints
as before the shared base, one stalled check, and a lost Try step queued again like Apply's."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from memory.models import ApplyJob, Job, TrialJob
from memory.tools import apply, jobs, trial_jobs


def constraint_names(model) -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.get_constraints(cursor, model._meta.db_table))


@pytest.mark.parametrize(("model", "table"), [(TrialJob, "memory_trialjob"), (ApplyJob, "memory_applyjob")])
def test_each_kind_keeps_its_table_and_constraint_names(db, model, table):
    assert model._meta.db_table == table and issubclass(model, Job)
    kind = table.removeprefix("memory_")
    assert {f"{kind}_status_valid", f"{kind}_one_active_per_agent"} <= constraint_names(model)


def test_the_database_refuses_a_second_active_job_of_a_kind_but_not_of_the_other(agent):
    now = timezone.now()
    TrialJob.objects.create(agent=agent, config={}, people=1, as_of=now, created_at=now)
    with pytest.raises(IntegrityError), transaction.atomic():
        TrialJob.objects.create(agent=agent, config={}, people=1, as_of=now, created_at=now)
    ApplyJob.objects.create(agent=agent, version=agent.versions.first(), created_at=now)


def test_the_failed_label_stays_per_kind():
    assert dict(ApplyJob._meta.get_field("status").choices)["failed"] == "Stopped after errors"
    assert dict(TrialJob._meta.get_field("status").choices)["failed"] == "Failed"


def test_one_stalled_check_for_both_kinds(agent):
    now = timezone.now()
    old = now - jobs.STALLED_AFTER - timedelta(seconds=1)
    trial = TrialJob.objects.create(agent=agent, config={}, people=1, as_of=old, created_at=old)
    applying = ApplyJob.objects.create(agent=agent, version=agent.versions.first(), created_at=old)
    assert trial_jobs.trial_is_stalled(trial, now) and apply.apply_is_stalled(applying, now)
    assert jobs.job_backlog(TrialJob) == (1, old) and jobs.job_backlog(ApplyJob) == (1, old)
    TrialJob.objects.filter(pk=trial.pk).update(heartbeat_at=now)
    trial.refresh_from_db()
    assert not jobs.job_is_stalled(trial, now)


def test_a_lost_try_step_is_queued_again_and_finishes(agent):
    old = timezone.now() - timedelta(minutes=20)
    job = TrialJob.objects.create(
        agent=agent, config={}, people=1, status=TrialJob.Status.RUNNING, as_of=old, created_at=old, started_at=old
    )
    assert trial_jobs.trial_resume_stalled() == 1
    job.refresh_from_db()
    assert job.status == TrialJob.Status.DONE  # tests run tasks inline: the queued step finished it
    assert trial_jobs.trial_resume_stalled() == 0
