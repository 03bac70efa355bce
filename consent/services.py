"""Consent writes and the ask-first gate (R26)."""

from django.db import transaction
from django.dispatch import Signal
from django.utils import timezone

from agents.errors import AppError
from agents.models import Agent, Conversation, EndUser
from consent.models import Consent


def consent_gate(*, agent: Agent, end_user: EndUser, settings: dict, source: str) -> str | None:
    """With askFirst on, memory stays off for an end user until they say yes."""
    if not settings.get("askFirst"):
        return None
    agreed = Consent.objects.filter(end_user=end_user, agreed_at__isnull=False).exists()
    return None if agreed else Conversation.MemoryOff.CONSENT


# Sent by consent_set in its transaction: end_user_id=, agreed_at= (None after a no). The memory
# row keeps agreedAt beside its text (memory.store.counters listens).
consent_changed = Signal()


@transaction.atomic
def consent_set(*, end_user: EndUser, agreed: bool, source: str, now=None) -> Consent:
    """Record a yes (keeping the first yes's date) or a no (clearing agreed_at). Refuses an
    unknown source, changing nothing."""
    if source not in Consent.Source.values:
        raise AppError("invalid_source", f"source must be one of {', '.join(Consent.Source.values)}.", field="source")
    now = now or timezone.now()
    consent, _ = Consent.objects.get_or_create(
        end_user=end_user, defaults={"agent_id": end_user.agent_id, "source": source}
    )
    if agreed:
        if consent.agreed_at is None:
            consent.agreed_at = now
            consent.source = source
        consent.declined_at = None
    else:
        consent.agreed_at = None
        consent.declined_at = now
        consent.source = source
    consent.save()
    consent_changed.send(sender=Consent, end_user_id=end_user.pk, agreed_at=consent.agreed_at)
    return consent


def consent_record(*, end_user: EndUser, agreed: bool, source: str) -> dict:
    """A chat surface's yes or no: recorded by `consent_set`, answered as the new consent state."""
    from consent.selectors import consent_state

    consent_set(end_user=end_user, agreed=agreed, source=source)
    state = consent_state(end_user)
    assert state is not None  # just recorded
    return state
