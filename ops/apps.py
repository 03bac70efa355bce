from django.apps import AppConfig


class OpsConfig(AppConfig):
    """Operations: the background work's health, /metrics counters and structured logs."""

    name = "ops"
    verbose_name = "Operations"

    def ready(self):
        from . import signals  # noqa: F401  (connects the counters and the task log lines)
