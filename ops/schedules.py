"""Every django-q schedule of the project, declared once. After each `migrate`, `schedules_ensure`
creates the missing ones, so a schedule added here reaches every existing database on its next
migrate. The functions are dotted paths, so this module imports no app."""

from django.utils import timezone

SCHEDULES: dict[str, dict[str, object]] = {
    "memory-quiet-sweep": {
        "func": "memory.tasks.sweep_quiet_windows",
        "schedule_type": "I",  # Schedule.MINUTES
        "minutes": 1,
    },
    "memory-retention": {
        "func": "memory.tasks.retention_sweep",
        "schedule_type": "D",  # Schedule.DAILY
    },
    "webhooks-retry": {
        "func": "webhooks.tasks.retry_due",
        "schedule_type": "I",
        "minutes": 1,
    },
    # The API's idempotency keys are kept 24 hours (surfaces.http.idempotency); older ones go.
    "idempotency-keys-expire": {
        "func": "surfaces.tasks.idempotency_keys_expire",
        "schedule_type": "H",  # Schedule.HOURLY
    },
}


def schedules_ensure(*, schedule_model=None, using: str = "default") -> list[str]:
    """Create each declared schedule that is missing (by name) and bring a declared one whose task or
    timing differs back to the declaration; its next run and any other schedule are left alone.
    Idempotent. Returns the names it created or changed."""
    if schedule_model is None:
        from django_q.models import Schedule

        schedule_model = Schedule
    touched = []
    for name, spec in SCHEDULES.items():
        schedule, created = schedule_model.objects.using(using).get_or_create(
            name=name, defaults={**spec, "repeats": -1, "next_run": timezone.now()}
        )
        changed = [field for field, value in spec.items() if getattr(schedule, field) != value]
        if changed:
            for field, value in spec.items():
                setattr(schedule, field, value)
            schedule.save(using=using, update_fields=changed)
        if created or changed:
            touched.append(name)
    return touched


def schedules_after_migrate(sender, *, apps=None, using="default", **kwargs) -> None:
    """The post_migrate receiver, with django-q's model as that migrate left it: absent when django-q's
    migrations are not applied (migrated back to zero), and then there is nothing to do. `flush` sends
    the signal too, without `apps`: it empties the tables and migrates nothing, so it makes nothing
    (a test database flushed between tests stays empty, as it was before schedules moved here)."""
    if apps is None:
        return
    try:
        schedule_model = apps.get_model("django_q", "Schedule")
    except LookupError:
        return
    schedules_ensure(schedule_model=schedule_model, using=using)
