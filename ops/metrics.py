"""/metrics in the Prometheus text format: gauges read from the database at scrape time, and the
counters of ops.counters. Codes and numbers only: no memory text, no id, no name."""

from collections import defaultdict

from django.db.models import Count, Sum
from django.utils import timezone
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.registry import CollectorRegistry

from ops import counters, health

COUNTERS = {
    # counter name in ops.counters: (metric name, help, label names)
    "memory_runs": ("agentnava_memory_runs", "Memory runs recorded, by kind and status.", ("kind", "status")),
    "guard_drops": ("agentnava_guard_drops", "Operations the guards dropped, by reason.", ("kind", "reason")),
    "model_calls": (
        "agentnava_model_calls",
        "Calls to the model, by task and outcome (ok or an error code).",
        ("task", "outcome"),
    ),
    "chat_starts": ("agentnava_chat_starts", "Chats started, with and without memory.", ("memory",)),
    "throttled": ("agentnava_throttled_requests", "Requests refused with 429, by surface.", ("surface",)),
    "requests": ("agentnava_http_requests", "HTTP requests answered, by status class.", ("status",)),
    "tasks": ("agentnava_tasks", "Background tasks finished, by task and outcome.", ("func", "outcome")),
}
HISTOGRAMS = {
    "model_latency_seconds": ("agentnava_model_latency_seconds", "Time a model call took, by task.", ("task",)),
}


class Collector:
    def collect(self):
        now = timezone.now()
        yield from self._database(now)
        yield from self._counters()

    def _database(self, now):
        from memory.models import ApplyJob

        waiting, oldest = health.due_backlog(now)
        yield GaugeMetricFamily(
            "agentnava_due_backlog", "Conversations whose quiet window has ended, waiting for their run.", value=waiting
        )
        yield GaugeMetricFamily(
            "agentnava_due_oldest_seconds",
            "Age of the oldest waiting conversation (0 when none waits).",
            value=(now - oldest).total_seconds() if oldest else 0,
        )
        try:
            queued, oldest_task = health.queue_backlog(now)
        except Exception:  # noqa: BLE001  (the broker does not answer: NaN, and task_health says 0)
            queued, oldest_task = float("nan"), None
        yield GaugeMetricFamily("agentnava_task_queue", "Tasks waiting in the broker.", value=queued)
        yield GaugeMetricFamily(
            "agentnava_task_queue_oldest_seconds",
            "Age of the oldest task waiting in the broker.",
            value=(now - oldest_task).total_seconds() if oldest_task else 0,
        )
        jobs = GaugeMetricFamily("agentnava_apply_jobs", "Apply jobs by status.", labels=["status"])
        for status, n in ApplyJob.objects.values_list("status").annotate(n=Count("id")).order_by():
            jobs.add_metric([status], n)
        yield jobs
        active = ApplyJob.objects.filter(status__in=ApplyJob.ACTIVE).aggregate(
            total=Sum("total"), reviewed=Sum("reviewed")
        )
        progress = GaugeMetricFamily(
            "agentnava_apply_memories", "Memories of active Apply jobs: to review and reviewed.", labels=["state"]
        )
        progress.add_metric(["total"], active["total"] or 0)
        progress.add_metric(["reviewed"], active["reviewed"] or 0)
        yield progress
        _, apply_oldest = health.apply_backlog(now)
        yield GaugeMetricFamily(
            "agentnava_apply_oldest_heartbeat_seconds",
            "Age of the oldest heartbeat of an active Apply.",
            value=(now - apply_oldest).total_seconds() if apply_oldest else 0,
        )
        yield GaugeMetricFamily(
            "agentnava_task_health",
            "1 while the background work moves, 0 when stalled (memory_health).",
            value=1 if health.task_health(now=now)["ok"] else 0,
        )

    def _counters(self):
        values = counters.snapshot()
        families = {
            name: CounterMetricFamily(metric, text, labels=list(labels))
            for name, (metric, text, labels) in COUNTERS.items()
        }
        hist_buckets: dict = defaultdict(lambda: defaultdict(dict))
        hist_sums: dict = defaultdict(dict)
        for key, value in sorted(values.items()):
            name, labels = counters.parse(key)
            if name in COUNTERS:
                _, _, label_names = COUNTERS[name]
                families[name].add_metric([labels.get(label, "") for label in label_names], value)
            elif name.endswith("_bucket") and name[: -len("_bucket")] in HISTOGRAMS:
                le = labels.pop("le")
                hist_buckets[name[: -len("_bucket")]][tuple(sorted(labels.items()))][le] = value
            elif name.endswith("_sum") and name[: -len("_sum")] in HISTOGRAMS:
                hist_sums[name[: -len("_sum")]][tuple(sorted(labels.items()))] = value
        yield from families.values()
        for name, (metric, text, label_names) in HISTOGRAMS.items():
            family = HistogramMetricFamily(metric, text, labels=list(label_names))
            for labelset, buckets in hist_buckets[name].items():
                as_dict = dict(labelset)
                ordered = [(le, buckets.get(le, 0)) for le in [str(b) for b in counters.LATENCY_BUCKETS] + ["+Inf"]]
                family.add_metric(
                    [as_dict.get(label, "") for label in label_names], ordered, hist_sums[name].get(labelset, 0)
                )
            yield family


def render() -> bytes:
    from prometheus_client import generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Collector())
    return generate_latest(registry)
