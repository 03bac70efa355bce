from django.core.management.base import BaseCommand

from memory.management.as_of import add_as_of, as_of_now
from memory.store.services import memory_retention_sweep


class Command(BaseCommand):
    help = (
        "Run retention once, synchronously (what the daily schedule does): memories past keepForDays, "
        "or of an agent whose memory has been off for over 30 days, are emptied; what they had read and a "
        "stop survive, so no older chat can bring a line back."
    )

    def add_arguments(self, parser):
        add_as_of(parser, "2027-03-01T00:00:00+00:00")

    def handle(self, *args, as_of=None, **options):
        now = as_of_now(as_of)
        counts = memory_retention_sweep(now=now)
        self.stdout.write(f"Retention as of {now.isoformat()}: {counts['expired']} memory(ies) emptied.")
