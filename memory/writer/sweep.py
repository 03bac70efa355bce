"""The quiet-window sweep: find the end users whose quiet window has ended and run the writer for them."""

from collections.abc import Iterator
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from memory.store import due
from memory.writer import run as writer_run
from memory.writer.batch import batch_size, run_quiet_windows


def memory_sweep(*, now: datetime | None = None, run_inline: bool = False, limit: int = 5000) -> list[int]:
    """Find end users whose quiet window has ended, claim them (`due.claim`) and queue their runs
    in tasks of at most `writer_batch.batch_size()` end users (task arguments are ids only; with a
    model, spread evenly over the tasks and over the cluster's workers, `_tasks`). With
    `run_inline`, run them here instead, with `now` as the time."""
    from django_q.tasks import async_task

    now = now or timezone.now()
    if run_inline:
        end_user_ids = due.due_end_users(now=now, limit=limit)
        for chunk in _tasks(end_user_ids):
            run_quiet_windows(end_user_ids=chunk, now=now)
        return end_user_ids
    end_user_ids = due.claim(now=now, limit=limit)
    for chunk in _tasks(end_user_ids):
        async_task("memory.tasks.run_quiet_windows", chunk, group="memory-quiet")
    return end_user_ids


def _tasks(end_user_ids: list[int]) -> Iterator[list[int]]:
    """The end users of each task. The offline engine: `batch_size()` a task, in order. A model
    (calls in flight together): as many tasks as it takes to stay within `batch_size()` (one wave
    of calls a task), and at least one per cluster worker while there are people for them, all of
    about the same size, so every worker waits on its share of the calls at once."""
    size = batch_size()
    if getattr(writer_run.get_engine(), "concurrency", 1) <= 1:
        yield from _chunks(end_user_ids, size)
        return
    total = len(end_user_ids)
    workers = settings.Q_CLUSTER.get("workers", 1)
    count = max(-(-total // size), min(workers if isinstance(workers, int) else 1, total))
    start = 0
    for n in range(count):
        end = start + total // count + (1 if n < total % count else 0)
        yield end_user_ids[start:end]
        start = end


def _chunks(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
