"""Reads for consent: what an end user has answered (R26)."""
from agents.models import EndUser

from .models import Consent


def consent_state(end_user: EndUser) -> dict | None:
    """{"agreedAt", "declinedAt", "source"} (ISO times or None), or None when they never answered."""
    consent = Consent.objects.filter(end_user=end_user).first()
    if consent is None:
        return None
    return {
        "agreedAt": consent.agreed_at.isoformat() if consent.agreed_at else None,
        "declinedAt": consent.declined_at.isoformat() if consent.declined_at else None,
        "source": consent.source,
    }
