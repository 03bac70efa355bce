"""Once created the webhooks-retry schedule. Schedules are now made after every migrate from
ops.schedules.SCHEDULES; kept, empty, because existing databases have it recorded."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0001_initial"),
        ("memory", "0002_schedules"),
    ]

    operations = []
