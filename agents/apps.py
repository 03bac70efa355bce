from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agents"

    def ready(self):
        from django.db.models.signals import post_delete, post_save

        from agents import receivers
        from agents.models import ApiKey, Membership, Team

        # Whatever changes a key's standing (the admin site and cascades included) drops every
        # process's cached keys within a second.
        for model in (ApiKey, Membership, Team):
            post_delete.connect(receivers.key_standing_changed, sender=model, dispatch_uid=f"keys.{model.__name__}.del")
        for model in (ApiKey, Membership):
            post_save.connect(receivers.key_standing_changed, sender=model, dispatch_uid=f"keys.{model.__name__}.save")
        # A deleted account's keys would lose their maker (SET_NULL) and pass for command-line keys.
        from django.contrib.auth import get_user_model
        from django.db.models.signals import pre_delete

        pre_delete.connect(receivers.maker_deleted, sender=get_user_model(), dispatch_uid="keys.maker_deleted")
