"""Quiet-window runs in batches: how many end users the sweep puts in one task (`batch_size`), and
the task's run of them (`run.run_quiet_windows`, the writer's one path: a run of one end user is
a batch of one).

A batch shares its reads and its commit (a fixed number of queries, one transaction) and handles
every case itself: a pending forget (its part read on its own, with the forget), a chat still
active (never read into: its cutoff), a backlog (MAX_MESSAGES_PER_RUN messages a run, the rest
left due), a memory changed since it was read (read again in the next round of the batch), an
engine failure (recorded with its backoff, for that end user only) and a commit the database
refused (a tie on `updated_at` committed again with new free times; after COMMIT_ATTEMPTS ties,
or any other refusal, each end user's change committed on its own). See `memory.writer.run`.
"""

from memory.writer import run as writer_run
from memory.writer.run import COMMIT_ATTEMPTS, RETRY_SPREAD_MICROSECONDS, run_quiet_windows

__all__ = ["BATCH_SIZE", "COMMIT_ATTEMPTS", "RETRY_SPREAD_MICROSECONDS", "batch_size", "run_quiet_windows"]

BATCH_SIZE = 25  # end users per task at most: large enough to share the reads, small enough to hold locks briefly


def batch_size() -> int:
    """End users per task with the configured engine: BATCH_SIZE with the offline rules (CPU,
    milliseconds a person); with a model, its concurrency (MODEL_CONCURRENCY): the batch's calls
    are in flight together (`engines.concurrently`), so a task takes about one call's time, at worst
    one call's timeout and retries, far inside the cluster's timeout."""
    engine = writer_run.get_engine()  # the writer's, which tests may swap
    if getattr(engine, "concurrency", 1) > 1:
        return max(1, engine.batch_size)
    return max(1, min(BATCH_SIZE, getattr(engine, "batch_size", 1)))
