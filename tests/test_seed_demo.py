"""`seed_demo` (what `make run` loads) gives the demo agent the id every README and docs/ example uses,
so a pasted command never answers 404; seeding again changes nothing."""

import io

from django.core.management import call_command

from agents.models import Agent, Team
from agents.services import agent_create
from surfaces.management.commands.seed_demo import DEMO_AGENT_ID

DOCUMENTED_ID = "agt_493fb4f0cf13"


def test_the_demo_agent_has_the_documents_id(db):
    assert DEMO_AGENT_ID == DOCUMENTED_ID
    out = io.StringIO()
    call_command("seed_demo", "--force", stdout=out)
    agent = Agent.objects.get(public_id=DOCUMENTED_ID)
    assert (agent.team.slug, agent.name) == ("demo", "Support")
    assert agent.end_users.filter(external_id="u_ananya").exists()
    assert f"team 'demo', agent {DOCUMENTED_ID}" in out.getvalue()
    call_command("seed_demo", "--force", stdout=io.StringIO())
    assert Agent.objects.filter(team__slug="demo").count() == 2


def test_a_demo_seeded_before_takes_the_documents_id(db):
    call_command("seed_demo", "--force", stdout=io.StringIO())
    Agent.objects.filter(public_id=DOCUMENTED_ID).update(public_id="agt_000000000001")
    call_command("seed_demo", "--force", stdout=io.StringIO())
    assert Agent.objects.get(public_id=DOCUMENTED_ID).name == "Support"


def test_the_id_is_never_taken_from_another_agent(db):
    other = agent_create(team=Team.objects.create(slug="other", name="Other"), name="Theirs")
    Agent.objects.filter(pk=other.pk).update(public_id=DOCUMENTED_ID)
    call_command("seed_demo", "--force", stdout=io.StringIO())
    assert Agent.objects.get(public_id=DOCUMENTED_ID).pk == other.pk
    assert Agent.objects.filter(team__slug="demo", name="Support").exists()
