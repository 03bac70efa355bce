"""Every django-q schedule of the project, declared once. A data migration creates them
idempotently, and a unique index on the schedule name means none can exist twice."""
from django_q.models import Schedule

SCHEDULES = {
    "memory-quiet-sweep": {
        "func": "memory.tasks.sweep_quiet_windows",
        "schedule_type": Schedule.MINUTES,
        "minutes": 1,
    },
    "memory-retention": {
        "func": "memory.tasks.retention_sweep",
        "schedule_type": Schedule.DAILY,
    },
}
