from django.core.management.base import BaseCommand, CommandError

from agents.errors import AppError
from agents.models import Plan
from agents.services import team_create


class Command(BaseCommand):
    help = "Create a team and its owner; prints the owner's first password once when it makes the user."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--plan", default=Plan.TEAM, choices=Plan.values)
        parser.add_argument("--owner", required=True, help="The owner's email address.")
        parser.add_argument("--name", default="")

    def handle(self, *args, slug, plan, owner, name, **options):
        try:
            team, password = team_create(slug=slug, name=name, plan=plan, owner_email=owner)
        except AppError as exc:
            raise CommandError(exc.message) from None
        except Exception as exc:  # full_clean's ValidationError: a slug that is not a slug
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Created team {team.slug} ({team.get_plan_display()} plan) owned by {owner}.")
        if password:
            self.stdout.write(f"The owner's first password (shown once): {password}")
        else:
            self.stdout.write("The owner already had an account; their password is unchanged.")
