"""Drops the unique index 0002_schedules once put on django-q's own table (not this project's to
index); a fresh database never had it. Schedules are made by name after every migrate
(ops.schedules), so none is created twice."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0006_trialjob_include_open"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [
        migrations.RunSQL("DROP INDEX IF EXISTS memory_schedule_name_unique", migrations.RunSQL.noop),
    ]
