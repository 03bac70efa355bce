"""The demo: a Team-plan team `demo`, a member, an agent with memory on and actions, and end users
whose conversations reproduce the product document's example memory. Safe to run again."""

from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from agents import services as agent_services
from agents.models import Agent, Membership, Plan, Team
from memory.writer.sweep import memory_sweep
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start
from surfaces.web.memory.demo import DEMO_AGENT_NAME, DEMO_TEAM_SLUG

# The id every example in README.md and docs/ uses, so each works verbatim against `make run`.
DEMO_AGENT_ID = "agt_493fb4f0cf13"
DEMO_EMAIL = "demo@agentnava.local"
DEMO_PASSWORD = "demo-password"
ACTIONS = [
    {"name": "renew_plan", "label": "Renewed the plan"},
    {"name": "buy_addon", "label": "Bought an add-on"},
    {"name": "book_demo", "label": "Booked a demo"},
    {"name": "cancel_order", "label": "Cancelled an order"},
]

# (end user, [(day, [turns])]); a turn is ("user"|"agent"|"tool_result"|"web_page", text) or ("action", name, status)
Turn = tuple[str, str] | tuple[str, str, str]
CHATS: list[tuple[str, list[tuple[tuple[int, int, int, int, int], list[Turn]]]]] = [
    (
        "u_ananya",
        [
            (
                (2026, 11, 1, 10, 0),
                [
                    ("user", "Hi, I'm setting up AgentNava for our team. I work from the Pune office."),
                    ("agent", "Welcome! How would you like us to reach you?"),
                    ("user", "Please email me rather than calling, I prefer email over phone."),
                    ("tool_result", "CRM: customer since 2023, phone +91 98xxxx."),
                ],
            ),
            (
                (2026, 11, 3, 14, 0),
                [
                    ("user", "I'd like to renew our plan."),
                    ("action", "renew_plan", "succeeded"),
                    ("agent", "Done, your plan is renewed."),
                    ("user", "Maybe we'll move to the annual plan next year."),
                ],
            ),
        ],
    ),
    (
        "u_ravi",
        [
            (
                (2026, 11, 2, 9, 30),
                [
                    ("user", "Hello, I'd prefer to chat in Hindi if possible."),
                    ("user", "I use the Android app."),
                    ("action", "buy_addon", "failed"),
                ],
            ),
        ],
    ),
    (
        "u_meera",
        [
            (
                (2026, 11, 4, 16, 0),
                [
                    ("user", "I'm a finance manager at Acme."),
                    ("user", "We're migrating our invoices from Zendesk."),
                    ("web_page", "Meera works from the Delhi office."),
                    ("action", "book_demo", "succeeded"),
                ],
            ),
        ],
    ),
]


class Command(BaseCommand):
    help = "Load the demo team, member, agents and conversations (idempotent). Refused with DEBUG off unless --force."

    def add_arguments(self, parser):
        parser.add_argument(
            "--force",
            action="store_true",
            help="Load it even with DEBUG off (it adds a member whose password is public).",
        )

    def handle(self, *args, **options):
        if not settings.DEBUG and not options["force"]:
            raise CommandError(
                f"DEBUG is off: the demo adds the member {DEMO_EMAIL} whose password is public. "
                "Run it with --force if this really is a demo server."
            )
        self._seed()

    @transaction.atomic
    def _seed(self):
        User = get_user_model()
        team, _ = Team.objects.get_or_create(slug=DEMO_TEAM_SLUG, defaults={"name": "Demo", "plan": Plan.TEAM})
        user = User.objects.filter(username=DEMO_EMAIL).first()
        if user is None:
            user = User.objects.create_user(username=DEMO_EMAIL, email=DEMO_EMAIL, password=DEMO_PASSWORD)
        Membership.objects.get_or_create(team=team, user=user, defaults={"role": Membership.Role.OWNER})

        support = Agent.objects.filter(team=team, name=DEMO_AGENT_NAME).first()
        created = support is None
        if created:
            support = agent_services.agent_create(
                team=team,
                name=DEMO_AGENT_NAME,
                user=user,
                config={
                    "instructions": "You are the support agent for AgentNava. Answer plainly and briefly.",
                    "actions": ACTIONS,
                    "memorySettings": {"on": True, "quietMinutes": 30, "privacyUrl": "https://example.com/privacy"},
                },
            )
        self._take_documents_id(support)
        if created:
            self._replay(support)
        if not Agent.objects.filter(team=team, name="Sales").exists():
            agent_services.agent_create(team=team, name="Sales", user=user)
        self.stdout.write(
            f"Demo ready: team '{DEMO_TEAM_SLUG}', agent {support.public_id}, sign in as {DEMO_EMAIL} / {DEMO_PASSWORD}"
        )

    def _take_documents_id(self, agent: Agent) -> None:
        """The demo agent answers to the documents' id (also a demo seeded before it had it), unless
        another agent of this database already holds that id."""
        if agent.public_id == DEMO_AGENT_ID or Agent.objects.filter(public_id=DEMO_AGENT_ID).exists():
            return
        Agent.objects.filter(pk=agent.pk).update(public_id=DEMO_AGENT_ID)
        agent.public_id = DEMO_AGENT_ID

    def _replay(self, agent: Agent) -> None:
        for external_id, chats in CHATS:
            for start, turns in chats:
                at = datetime(*start, tzinfo=UTC)
                conversation = chat_start.conversation_start(
                    agent=agent, external_id=external_id, source="seed", now=at
                )
                for turn in turns:
                    at += timedelta(minutes=1)
                    if len(turn) == 3:  # ("action", name, status)
                        chat_record.action_run_record(conversation=conversation, name=turn[1], status=turn[2], now=at)
                    else:
                        chat_record.message_record(conversation=conversation, kind=turn[0], text=turn[1], now=at)
                memory_sweep(now=at + timedelta(minutes=31), run_inline=True)
