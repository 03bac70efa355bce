"""The surfaces' scheduled tasks (declared in ops.schedules.SCHEDULES)."""

from django.utils import timezone

from surfaces.http.idempotency import idempotency_keys_expire as keys_expire


def idempotency_keys_expire() -> int:
    """Delete the API's idempotency keys older than 24 hours; answers how many went."""
    return keys_expire(now=timezone.now())
