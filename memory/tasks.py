"""django-q tasks. Thin: they take ids only (never a person's words, which would survive an erase
in django-q's tables), load what they need and call a service. Safe to deliver twice."""

from memory.store import services
from memory.writer import batch as writer_batch
from memory.writer import run as writer
from memory.writer import sweep as writer_sweep


def sweep_quiet_windows() -> int:
    return len(writer_sweep.memory_sweep())


def run_quiet_window(end_user_id: int) -> int | None:
    run = writer.run_quiet_window(end_user_id=end_user_id)
    return run.pk if run else None


def run_quiet_windows(end_user_ids: list[int]) -> list[int]:
    return [run.pk for run in writer_batch.run_quiet_windows(end_user_ids=end_user_ids)]


def retention_sweep() -> dict:
    return services.memory_retention_sweep()


def apply_job_step(job_id: int) -> str:
    from memory.tools.apply import apply_job_step as step

    return step(job_id)


def trial_job_step(job_id: int) -> str:
    from memory.tools.trial_jobs import trial_job_step as step

    return step(job_id)
