from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self) -> None:
        from consent.services import consent_changed
        from memory.store import counters

        consent_changed.connect(counters.consent_changed, dispatch_uid="memory-agreed-at")
