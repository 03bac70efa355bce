"""Migration 0004 (issue 9): memories of an agent that shared an updated_at before the unique index
are spread a microsecond apart, so the index can be built on a database with real data."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("memory", "0003_apply_job")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_ties_are_spread_before_the_unique_index_is_built():
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    old_apps = migrate(BEFORE)
    Team = old_apps.get_model("agents", "Team")
    Agent = old_apps.get_model("agents", "Agent")
    EndUser = old_apps.get_model("agents", "EndUser")
    Memory = old_apps.get_model("memory", "Memory")
    team = Team.objects.create(slug="ties", name="Ties", plan="team")
    agents = [Agent.objects.create(team=team, name=f"A{i}", public_id=f"agt_ties{i}") for i in range(2)]
    same = timezone.now() - timedelta(days=1)
    for agent in agents:
        for i in range(3):
            end_user = EndUser.objects.create(agent=agent, external_id=f"u_{i}")
            Memory.objects.create(agent=agent, end_user=end_user, text="Speaks Hindi.", updated_at=same)
    try:
        new_apps = migrate([("memory", "0004_lifecycle")])
        Memory = new_apps.get_model("memory", "Memory")
        for agent in agents:
            times = sorted(Memory.objects.filter(agent_id=agent.pk).values_list("updated_at", flat=True))
            assert times == [same + timedelta(microseconds=i) for i in range(3)]
    finally:
        migrate(latest)
