"""Reads for consent: what an end user has answered (R26)."""

from agents.models import EndUser
from consent.models import Consent


def consent_of(end_user: EndUser) -> Consent | None:
    """What one end user answered (the row), or None when they never did: the one read of it."""
    return Consent.objects.filter(end_user=end_user).first()


def consent_state(end_user: EndUser) -> dict | None:
    """{"agreedAt", "declinedAt", "source"} (ISO times or None), or None when they never answered."""
    consent = consent_of(end_user)
    if consent is None:
        return None
    return {
        "agreedAt": consent.agreed_at.isoformat() if consent.agreed_at else None,
        "declinedAt": consent.declined_at.isoformat() if consent.declined_at else None,
        "source": consent.source,
    }
