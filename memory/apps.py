from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self):
        from agents.extensions import registry

        from . import note, services

        if services.stopped_gate not in registry.memory_gates:
            registry.memory_gates.append(services.stopped_gate)
        # Memory instructions are checked by the same guards as a memory line (agents.config validates them).
        from agents import config as agent_config

        from .policy import instructions_refusal

        if instructions_refusal not in agent_config.INSTRUCTION_GUARDS:
            agent_config.INSTRUCTION_GUARDS.append(instructions_refusal)
        registry.memory_note = note.note_for_conversation
        from . import due

        registry.memory_due_mark = due.mark
        # The end user's own requests in any chat (R22), and what the website chat shows them.
        from agents.embed_services import hooks

        from .end_user_commands import end_user_memory_state, end_user_request

        registry.end_user_request = end_user_request
        hooks.memory_state = end_user_memory_state
        registry.offline_handlers.setdefault("memory_operations", _offline_memory_operations)


def _offline_memory_operations(payload: dict) -> dict:
    from .offline import memory_operations  # the rules load on first use, not at start-up

    return memory_operations(payload)
