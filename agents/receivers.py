"""Listeners of this app's own models: a key's standing changed, so every process's key cache goes."""

from .services import key_generation_bump


def key_standing_changed(sender, instance, created=False, **kwargs):
    """A key saved or deleted (a new key changes nobody's standing), a membership made, changed or
    removed, a team deleted: bump the key generation once the transaction commits."""
    if sender.__name__ == "ApiKey" and created:
        return
    key_generation_bump()
