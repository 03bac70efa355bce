"""The reads in memory.store.selectors: one end user's memory, and the list of who is remembered (one
keyset-paged statement, read by the API and the Memory tab alike)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents import services as agent_services
from agents.keyset import cursor_decode
from agents.models import AgentVersion
from memory.store import services
from memory.store.selectors import memories_page, memories_page_cursor, memory_of
from tests.memory.seed import remembered


@pytest.fixture
def many(agent):
    base = timezone.now() - timedelta(days=1)
    for i in range(120):
        remembered(agent, f"u_{i:03}", f"Prefers email over phone.\nLine {i}.", at=base + timedelta(minutes=i))
    return base


def ids(reads) -> list[str]:
    return [read["endUserId"] for read in reads]


def test_memory_of_reads_the_row_by_end_user_or_id_and_none_when_never_written(agent):
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id="u_new")
    assert memory_of(end_user) is None and memory_of(end_user.pk) is None
    services.memory_set(end_user=end_user, text="Prefers email.")
    assert memory_of(end_user).lines == ["Prefers email."] == memory_of(end_user.pk).lines


def test_the_published_version_is_the_newest(agent):
    assert AgentVersion.objects.published(agent).number == 1
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"quietMinutes": 30}})
    assert AgentVersion.objects.published(agent).number == 2


def test_pages_do_not_shift_when_someone_changes_meanwhile(agent, many):
    first, more = memories_page(agent_id=agent.pk, limit=50)
    assert more and ids(first)[:2] == ["u_119", "u_118"]
    remembered(agent, "u_new", "Speaks Hindi.")  # newest change, lands on page one
    second, more = memories_page(agent_id=agent.pk, limit=50, after_key=cursor_decode(memories_page_cursor(first[-1])))
    assert more and ids(second)[:2] == ["u_069", "u_068"]
    third, more = memories_page(agent_id=agent.pk, limit=50, after_key=cursor_decode(memories_page_cursor(second[-1])))
    assert ids(third) == [f"u_{i:03}" for i in range(19, -1, -1)] and not more


def test_paging_never_uses_offset_and_walks_the_index(agent, many):
    first, _ = memories_page(agent_id=agent.pk, limit=50)
    with CaptureQueriesContext(connection) as queries:
        memories_page(agent_id=agent.pk, limit=50, after_key=cursor_decode(memories_page_cursor(first[-1])))
    assert len(queries.captured_queries) == 1
    sql = queries.captured_queries[0]["sql"]
    assert "OFFSET" not in sql.upper()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memory_memory")
            cursor.execute("SET enable_seqscan = off")
            cursor.execute("SET enable_bitmapscan = off")
            cursor.execute("SET enable_sort = off")
            cursor.execute("EXPLAIN " + sql)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            cursor.execute("SET enable_seqscan = on")
            cursor.execute("SET enable_bitmapscan = on")
            cursor.execute("SET enable_sort = on")
        assert "Index Scan using memory_agent_present" in plan, plan  # the partial index of present rows, in order
        assert "Sort" not in plan and "Join" not in plan and "SubPlan" not in plan, plan  # one table, no per-row read
