"""Every django-q schedule of the project, declared once. A data migration creates them
idempotently, and a unique index on the schedule name means none can exist twice."""

SCHEDULES = {
    "memory-quiet-sweep": {
        "func": "memory.tasks.sweep_quiet_windows",
        "schedule_type": "I",  # Schedule.MINUTES
        "minutes": 1,
    },
    "memory-retention": {
        "func": "memory.tasks.retention_sweep",
        "schedule_type": "D",  # Schedule.DAILY
    },
}


def ensure_schedules(schedule_model) -> None:
    """get_or_create each schedule by name (the model is passed so migrations can use theirs)."""
    from django.utils import timezone

    for name, spec in SCHEDULES.items():
        schedule_model.objects.get_or_create(name=name, defaults={**spec, "repeats": -1, "next_run": timezone.now()})
