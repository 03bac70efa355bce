from datetime import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from memory.services import memory_retention_sweep


class Command(BaseCommand):
    help = (
        "Run retention once, synchronously (what the daily schedule does): memories past keepForDays, "
        "or of an agent whose memory has been off for over 30 days, are emptied; what they had read and a "
        "stop survive, so no older chat can bring a line back."
    )

    def add_arguments(self, parser):
        parser.add_argument("--as-of", help="Treat this ISO time as now, e.g. 2027-03-01T00:00:00+00:00.")

    def handle(self, *args, as_of=None, **options):
        now = timezone.now()
        if as_of:
            try:
                now = datetime.fromisoformat(as_of)
            except ValueError:
                raise CommandError(f"--as-of is not an ISO time: {as_of!r}") from None
            if timezone.is_naive(now):
                now = timezone.make_aware(now, timezone.get_current_timezone())
        counts = memory_retention_sweep(now=now)
        self.stdout.write(f"Retention as of {now.isoformat()}: {counts['expired']} memory(ies) emptied.")
