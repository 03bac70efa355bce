"""django-q entry points: arguments are ids only."""

from webhooks import services


def deliver(delivery_id: int) -> str | None:
    return services.deliver(delivery_id)


def retry_due() -> int:
    return services.retry_due()
