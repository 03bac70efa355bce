from django.core.management.base import BaseCommand, CommandError

from agents.models import Team
from agents.services import api_key_create


class Command(BaseCommand):
    help = "Create an API key for a team and print it once (only its hash is stored)."

    def add_arguments(self, parser):
        parser.add_argument("--team", required=True, help="The team's slug.")
        parser.add_argument("--name", default="CLI key")

    def handle(self, *args, team, name, **options):
        found = Team.objects.filter(slug=team).first()
        if found is None:
            raise CommandError(f"No team with the slug {team!r}.")
        key, raw = api_key_create(team=found, name=name)
        self.stdout.write(raw)
