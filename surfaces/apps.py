from django.apps import AppConfig


class SurfacesConfig(AppConfig):
    """Every request and response: the REST API, the website chat, the web pages and the chat turn they
    share. It sits above the domain apps and imports what it uses from them directly."""

    name = "surfaces"
    verbose_name = "Surfaces"

    def ready(self):
        from surfaces.http import idempotency  # noqa: F401 - a deleted or stopped memory drops its kept answers
