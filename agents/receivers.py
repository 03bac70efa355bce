"""Listeners of this app's own models: a key's standing changed, so every process's key cache goes."""

from django.utils import timezone

from agents.services import key_generation_bump


def key_standing_changed(sender, instance, created=False, **kwargs):
    """A key saved or deleted (a new key changes nobody's standing), a membership made, changed or
    removed, a team deleted: bump the key generation once the transaction commits."""
    if sender.__name__ == "ApiKey" and created:
        return
    key_generation_bump()


def maker_deleted(sender, instance, **kwargs):
    """An account is deleted: every key it made is revoked first, so none of them, its maker gone
    (`created_by` is set to null), passes for a key made on the command line (which acts as an admin)."""
    from agents.models import ApiKey

    if ApiKey.objects.filter(created_by=instance, revoked_at__isnull=True).update(revoked_at=timezone.now()):
        key_generation_bump()
