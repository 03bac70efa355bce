from django.apps import AppConfig


class SurfacesConfig(AppConfig):
    """Every request and response: the REST API, the website chat, the web pages and the chat turn they
    share. It sits above the domain apps and imports what it uses from them directly."""

    name = "surfaces"
    verbose_name = "Surfaces"

    def ready(self):
        from agents.ports import add_offline_handler
        from surfaces.chat import offline as offline_chat

        add_offline_handler("chat_reply", offline_chat.chat_reply)
