from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self):
        # What `agents` needs from memory reaches it through its ports (agents imports no other app).
        from agents import agent_config
        from agents.ports import add_memory_gate, add_offline_handler, fill

        from . import due, note, services
        from .policy import instructions_refusal
        from .end_user_commands import end_user_memory_state, end_user_request

        add_memory_gate(services.stopped_gate)
        # Memory instructions are checked by the same guards as a memory line (agents.agent_config validates them).
        if instructions_refusal not in agent_config.INSTRUCTION_GUARDS:
            agent_config.INSTRUCTION_GUARDS.append(instructions_refusal)
        fill(
            memory_note=note.note_for_conversation,
            memory_due_mark=due.mark,
            # The end user's own requests in any chat (R22), and what the website chat shows them.
            end_user_request=end_user_request,
            end_user_memory_state=end_user_memory_state,
        )
        add_offline_handler("memory_operations", offline_memory_operations)


def offline_memory_operations(payload: dict) -> dict:
    """The writer's offline rules; they load on first use, not at start-up."""
    from .offline import memory_operations

    return memory_operations(payload)
