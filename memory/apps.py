from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self):
        from agents.extensions import registry

        from . import note, services

        if services.stopped_gate not in registry.memory_gates:
            registry.memory_gates.append(services.stopped_gate)
        registry.memory_note = note.note_for_conversation
        registry.offline_handlers.setdefault("memory_operations", _offline_memory_operations)


def _offline_memory_operations(payload: dict) -> dict:
    from .offline import memory_operations  # the rules load on first use, not at start-up

    return memory_operations(payload)
