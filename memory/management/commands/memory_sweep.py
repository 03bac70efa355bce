from datetime import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from memory.services import memory_sweep


class Command(BaseCommand):
    help = "Run the quiet-window sweep once, synchronously (what the every-minute schedule does)."

    def add_arguments(self, parser):
        parser.add_argument("--as-of", help="Treat this ISO time as now, e.g. 2026-11-03T15:00:00+00:00.")

    def handle(self, *args, as_of=None, **options):
        now = timezone.now()
        if as_of:
            try:
                now = datetime.fromisoformat(as_of)
            except ValueError:
                raise CommandError(f"--as-of is not an ISO time: {as_of!r}") from None
            if timezone.is_naive(now):
                now = timezone.make_aware(now, timezone.get_current_timezone())
        end_users = memory_sweep(now=now, run_inline=True)
        self.stdout.write(f"Swept as of {now.isoformat()}: {len(end_users)} end user(s) read.")
