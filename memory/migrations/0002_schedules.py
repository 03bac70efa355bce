"""Once created the schedules and a unique index on django-q's own table. Both moved out of
migrations: the schedules are made after every migrate from ops.schedules.SCHEDULES, and
0007_drop_schedule_name_index drops the index where this migration made it. Kept, empty, because
existing databases have it recorded and later migrations depend on it."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0001_initial"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = []
