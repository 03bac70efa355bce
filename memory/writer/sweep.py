"""The quiet-window sweep: find the end users whose quiet window has ended and run the writer for them."""

from datetime import datetime

from django.utils import timezone

from memory.store import due
from memory.writer.batch import batch_size, run_quiet_windows


def memory_sweep(*, now: datetime | None = None, run_inline: bool = False, limit: int = 5000) -> list[int]:
    """Find end users whose quiet window has ended, claim them (`due.claim`) and queue their runs,
    `writer_batch.batch_size()` end users a task (task arguments are ids only). With `run_inline`,
    run them here instead, with `now` as the time."""
    from django_q.tasks import async_task

    now = now or timezone.now()
    if run_inline:
        end_user_ids = due.due_end_users(now=now, limit=limit)
        for chunk in _chunks(end_user_ids, batch_size()):
            run_quiet_windows(end_user_ids=chunk, now=now)
        return end_user_ids
    end_user_ids = due.claim(now=now, limit=limit)
    for chunk in _chunks(end_user_ids, batch_size()):
        async_task("memory.tasks.run_quiet_windows", chunk, group="memory-quiet")
    return end_user_ids


def _chunks(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start : start + size]
