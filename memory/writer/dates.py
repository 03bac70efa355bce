"""Dates in memory lines: the day the person said it or the action ran, short ("3 Nov"),
with the year when it is not the current one ("3 Nov 2025")."""

from datetime import date, datetime

from django.utils import timezone


def short_date(when: datetime | date, today: date | None = None) -> str:
    day = timezone.localtime(when).date() if isinstance(when, datetime) else when
    today = today or timezone.localdate()
    text = f"{day.day} {day:%b}"
    return text if day.year == today.year else f"{text} {day.year}"
