"""What feeds the counters and the operator's log lines: a chat started (the conversation's insert),
the memory's events (memory.store.events: a change that wrote an audit row), django-q's
post_execute (a task finished) and the engines' model_called.
Codes, numbers and ids of agents only: never a memory's text, a message or a key."""

import logging
import time

from django.db.models.signals import post_save
from django.dispatch import receiver
from django.utils import timezone
from django_q.signals import post_execute_in_worker, pre_execute

from agents.engines import model_called as model_called_signal
from agents.models import Conversation
from memory.store.events import MemoryChanged, memory_changed
from ops import counters

log = logging.getLogger("agentnava.ops")


@receiver(post_save, sender=Conversation, dispatch_uid="ops.chat_started")
def chat_started(sender, instance, created, **kwargs):
    if created:
        counters.add("chat_starts", memory="yes" if instance.uses_memory else "no")


@receiver(memory_changed, dispatch_uid="ops.memory_run")
def memory_run_recorded(sender, event: MemoryChanged, **kwargs):
    """A change that wrote an audit row: counted, and one log line. Heard inside the change's
    transaction, as the audit row's own save was."""
    run = event.run
    if run is None:
        return
    counters.add("memory_runs", kind=run.kind, status=run.status)
    for reason, count in run.dropped.items():
        counters.add("guard_drops", int(count), kind=run.kind, reason=reason)
    log.info(
        "memory_run",
        extra={
            "event": "memory_run",
            "agent_id": event.agent_id,
            "kind": run.kind,
            "outcome": run.status,
            "error_code": run.error or None,
            "duration_ms": run.duration_ms,
            "added": run.counts.added,
            "replaced": run.counts.replaced,
            "removed": run.counts.removed,
            "dropped": sum(run.dropped.values()),
        },
    )


@receiver(pre_execute, dispatch_uid="ops.task_started")
def task_started(sender, task, **kwargs):
    task["ops_started"] = time.monotonic()
    queued_at = task.get("started")  # django-q stamps a task when it is queued
    task["ops_queued_ms"] = int((timezone.now() - queued_at).total_seconds() * 1000) if queued_at else None


@receiver(post_execute_in_worker, dispatch_uid="ops.task_finished")
def task_finished(sender, task, **kwargs):
    """One line per task: its function, how long it waited and ran, success or not. Not its
    arguments or its result (a failure's result is a traceback that may quote anything)."""
    func = task.get("func")
    func = func if isinstance(func, str) else getattr(func, "__name__", "other")
    outcome = "ok" if task.get("success") else "failed"
    counters.add("tasks", func=func.rsplit(".", 1)[-1], outcome=outcome)
    began = task.get("ops_started")
    log.log(
        logging.INFO if outcome == "ok" else logging.WARNING,
        "task",
        extra={
            "event": "task",
            "func": func,
            "outcome": outcome,
            "duration_ms": int((time.monotonic() - began) * 1000) if began else None,
            "queued_ms": task.get("ops_queued_ms"),
            "attempt": task.get("attempt_count"),
            "group": task.get("group"),
        },
    )


def model_called(sender, task: str, seconds: float, error_code: str | None, **kwargs):
    counters.add("model_calls", task=task, outcome=error_code or "ok")
    counters.observe("model_latency_seconds", seconds, task=task)


model_called_signal.connect(model_called, dispatch_uid="ops.model_called")
