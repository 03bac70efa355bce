from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agents"

    def ready(self):
        from . import offline_chat
        from .ports import add_offline_handler

        add_offline_handler("chat_reply", offline_chat.chat_reply)
