from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agents"

    def ready(self):
        from . import offline_rules
        from .extensions import registry

        registry.offline_handlers.setdefault("chat_reply", offline_rules.chat_reply)
        registry.offline_handlers.setdefault("builder_changes", offline_rules.builder_changes)
