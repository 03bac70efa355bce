from django.apps import AppConfig, apps
from django.db.models.signals import post_migrate


class OpsConfig(AppConfig):
    """Operations: the project's schedules, the background work's health, /metrics counters and
    structured logs."""

    name = "ops"
    verbose_name = "Operations"

    def ready(self):
        from ops import signals  # noqa: F401  (connects the counters and the task log lines)
        from ops.schedules import schedules_after_migrate

        # Once per migrate, as django-q's app (ops has no models, so Django sends it no post_migrate);
        # post_migrate comes after every app's migrations have run.
        post_migrate.connect(
            schedules_after_migrate, sender=apps.get_app_config("django_q"), dispatch_uid="ops.schedules"
        )
