"""`--as-of`, shared by the commands that run a schedule's work once (memory_sweep, memory_retention)."""

from datetime import datetime

from django.core.management.base import CommandError
from django.utils import timezone


def add_as_of(parser, example: str) -> None:
    parser.add_argument("--as-of", help=f"Treat this ISO time as now, e.g. {example}.")


def as_of_now(value: str | None) -> datetime:
    """Now, or the ISO time given (a naive one is read in the current time zone); a clear error
    for anything else."""
    if not value:
        return timezone.now()
    try:
        now = datetime.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--as-of is not an ISO time: {value!r}") from None
    return timezone.make_aware(now, timezone.get_current_timezone()) if timezone.is_naive(now) else now
