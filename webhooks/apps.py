from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from agents.ports import add_error_codes
        from webhooks import receivers  # noqa: F401  (memory changes -> deliveries)
        from webhooks.api_errors import WEBHOOK_ERROR_CODES

        add_error_codes(WEBHOOK_ERROR_CODES)
