from django.core.management.base import BaseCommand

from memory.management.as_of import add_as_of, as_of_now
from memory.writer.sweep import memory_sweep


class Command(BaseCommand):
    help = "Run the quiet-window sweep once, synchronously (what the every-minute schedule does)."

    def add_arguments(self, parser):
        add_as_of(parser, "2026-11-03T15:00:00+00:00")

    def handle(self, *args, as_of=None, **options):
        now = as_of_now(as_of)
        end_users = memory_sweep(now=now, run_inline=True)
        self.stdout.write(f"Swept as of {now.isoformat()}: {len(end_users)} end user(s) read.")
