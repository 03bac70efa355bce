"""The minute sweep that retries webhook deliveries after their backoff (webhooks.tasks.retry_due),
created once by name like the project's other schedules (memory.schedules)."""
from django.db import migrations

NAME = "webhooks-retry"


def create(apps, schema_editor):
    from django.utils import timezone

    apps.get_model("django_q", "Schedule").objects.get_or_create(
        name=NAME,
        defaults={"func": "webhooks.tasks.retry_due", "schedule_type": "I", "minutes": 1, "repeats": -1, "next_run": timezone.now()},
    )


def remove(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0001_initial"),
        ("memory", "0002_schedules"),
    ]

    operations = [migrations.RunPython(create, remove)]
