"""The project's schedules (ops.schedules.SCHEDULES) are made after every migrate, once each, and a
schedule added to the declaration reaches an existing database on its next migrate. The unique index
an old migration put on django-q's own table is gone."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from django_q.models import Schedule

from ops.schedules import SCHEDULES


def migrate():
    call_command("migrate", verbosity=0, interactive=False)


def declared():
    return {name: Schedule.objects.filter(name=name).count() for name in SCHEDULES}


def test_after_migrate_each_declared_schedule_exists_once_as_declared(db):
    Schedule.objects.all().delete()
    migrate()
    assert declared() == dict.fromkeys(SCHEDULES, 1)
    for name, spec in SCHEDULES.items():
        schedule = Schedule.objects.get(name=name)
        assert {field: getattr(schedule, field) for field in spec} == spec
        assert schedule.repeats == -1 and schedule.next_run is not None


def test_migrating_twice_keeps_one_of_each_and_leaves_their_next_run(db):
    migrate()
    later = timezone.now() + timedelta(hours=5)
    Schedule.objects.filter(name__in=list(SCHEDULES)).update(next_run=later)
    migrate()
    assert declared() == dict.fromkeys(SCHEDULES, 1)
    assert set(Schedule.objects.filter(name__in=list(SCHEDULES)).values_list("next_run", flat=True)) == {later}


def test_a_schedule_added_to_the_declaration_appears_on_the_next_migrate(db, monkeypatch):
    migrate()
    monkeypatch.setitem(SCHEDULES, "ops-test-extra", {"func": "memory.tasks.retention_sweep", "schedule_type": "H"})
    assert not Schedule.objects.filter(name="ops-test-extra").exists()
    migrate()
    extra = Schedule.objects.get(name="ops-test-extra")
    assert (extra.func, extra.schedule_type) == ("memory.tasks.retention_sweep", Schedule.HOURLY)


def test_a_declared_schedule_changed_by_hand_is_brought_back_and_others_are_left_alone(db):
    migrate()
    Schedule.objects.filter(name="memory-quiet-sweep").update(func="memory.tasks.retention_sweep", minutes=7)
    mine = Schedule.objects.create(
        name="operator-own", func="memory.tasks.retention_sweep", schedule_type=Schedule.DAILY
    )
    migrate()
    sweep = Schedule.objects.get(name="memory-quiet-sweep")
    assert (sweep.func, sweep.minutes) == ("memory.tasks.sweep_quiet_windows", 1)
    assert Schedule.objects.get(pk=mine.pk).func == "memory.tasks.retention_sweep"


def schedule_indexes():
    with connection.cursor() as cursor:
        return set(connection.introspection.get_constraints(cursor, Schedule._meta.db_table))


@pytest.mark.django_db(transaction=True)
def test_the_old_unique_index_on_django_qs_table_is_dropped_on_an_existing_database():
    """A database migrated before the index was dropped has it; migrating it forward removes it."""
    assert "memory_schedule_name_unique" not in schedule_indexes()
    executor = MigrationExecutor(connection)
    executor.migrate([("memory", "0006_trialjob_include_open")])
    with connection.cursor() as cursor:  # as 0002_schedules once made it
        cursor.execute(
            "CREATE UNIQUE INDEX memory_schedule_name_unique ON django_q_schedule (name) WHERE name IS NOT NULL"
        )
    assert "memory_schedule_name_unique" in schedule_indexes()
    migrate()
    assert "memory_schedule_name_unique" not in schedule_indexes()
    assert declared() == dict.fromkeys(SCHEDULES, 1)
