"""Create the project's django-q schedules once, and make a second copy impossible."""
from django.db import migrations


def create_schedules(apps, schema_editor):
    from memory.schedules import ensure_schedules

    ensure_schedules(apps.get_model("django_q", "Schedule"))


def remove_schedules(apps, schema_editor):
    from memory.schedules import SCHEDULES

    apps.get_model("django_q", "Schedule").objects.filter(name__in=list(SCHEDULES)).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0001_initial"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [
        migrations.RunSQL(
            "CREATE UNIQUE INDEX IF NOT EXISTS memory_schedule_name_unique "
            "ON django_q_schedule (name) WHERE name IS NOT NULL",
            "DROP INDEX IF EXISTS memory_schedule_name_unique",
        ),
        migrations.RunPython(create_schedules, remove_schedules),
    ]
