from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self):
        # What `agents` needs from memory reaches it through its ports (agents imports no other app),
        # each filled once here; tests/agents/test_ports.py checks every signature.
        from agents.ports import add_error_codes, add_memory_gate, add_offline_handler, fill
        from memory.store.errors import MEMORY_ERROR_CODES

        add_error_codes(MEMORY_ERROR_CODES)  # first: the API's error schema is built from them

        from memory.guards import category_topics
        from memory.store import due, note, services
        from memory.store import settings as memory_settings
        from memory.store.end_user_requests import end_user_memory_state, end_user_request
        from memory.tools import builder
        from memory.tools.builder_rules import builder_changes

        add_memory_gate(services.stopped_gate)
        fill(
            memory_settings=memory_settings,  # the memorySettings schema, defaults and validator
            memory_note=note.note_for_conversation,
            note_read=note.note_read,
            memory_due_mark=due.mark,
            # The end user's own requests in any chat (R22), and what the website chat shows them.
            end_user_request=end_user_request,
            end_user_memory_state=end_user_memory_state,
            category_topics=category_topics,
            builder=builder,
            publish_warnings=builder.publish_warnings,
        )
        add_offline_handler("memory_operations", offline_memory_operations)
        add_offline_handler("builder_changes", builder_changes)


def offline_memory_operations(payload: dict) -> dict:
    """The writer's offline rules; they load on first use, not at start-up."""
    from memory.writer.offline import memory_operations

    return memory_operations(payload)
