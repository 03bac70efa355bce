from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agents"

    def ready(self):
        from . import offline_rules
        from .ports import add_offline_handler

        add_offline_handler("chat_reply", offline_rules.chat_reply)
        add_offline_handler("builder_changes", offline_rules.builder_changes)
