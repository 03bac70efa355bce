"""The People list of the Memory tab (R16): newest first, keyset-paged (never OFFSET), searchable by
end-user id, each row with its counts and states. The remembered list's selector: test_selectors.py."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from consent.services import consent_set
from memory.models import Memory
from memory.store import services
from tests.memory.seed import remembered


def tab(agent):
    """The People page of the Memory tab, where the list lives."""
    return reverse("memory:people", args=[agent.public_id])


def ids_on(page: str) -> list[str]:
    rows = page.split('<div id="memories"')[1]
    return re.findall(r'data-testid="memory-row">\s*<td><a href="[^"]+">([^<]+)</a>', rows)


@pytest.fixture
def many(agent):
    base = timezone.now() - timedelta(days=1)
    for i in range(120):
        remembered(agent, f"u_{i:03}", f"Prefers email over phone.\nLine {i}.", at=base + timedelta(minutes=i))
    return base


def test_newest_change_first_in_pages_of_50_with_a_cursor(member_client, agent, many):
    page = member_client.get(tab(agent)).content.decode()
    first = ids_on(page)
    assert first == [f"u_{i:03}" for i in range(119, 69, -1)]
    assert 'data-testid="people-count" aria-live="polite">1&ndash;50 of 120</p>' in page
    older = re.search(r'data-testid="older" href="([^"]+)"', page).group(1).replace("&amp;", "&")
    second = ids_on(member_client.get(older, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="memories").content.decode())
    assert second == [f"u_{i:03}" for i in range(69, 19, -1)]


def test_search_by_end_user_id(member_client, agent, many):
    page = member_client.get(
        tab(agent), {"q": "u_01"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="memories"
    ).content.decode()
    assert ids_on(page) == [f"u_{i:03}" for i in range(19, 9, -1)]
    page = member_client.get(tab(agent), {"q": "nobody"}).content.decode()
    assert ids_on(page) == [] and "No one matches &ldquo;nobody&rdquo;." in page


def test_a_bad_cursor_is_a_clear_error_and_shows_the_newest(member_client, agent, many):
    page = member_client.get(tab(agent), {"after": "not-a-cursor"}).content.decode()
    assert "That page link is not valid." in page
    assert ids_on(page)[0] == "u_119"


def test_each_row_has_lines_updated_last_run_stopped_and_consent(member_client, agent):
    memory = remembered(agent, "u_ananya", "Prefers email over phone.\nWorks from the Pune office.\nSpeaks Hindi.")
    Memory.objects.filter(pk=memory.pk).update(
        last_run={"at": timezone.now().isoformat(), "added": 1, "replaced": 2, "removed": 0}
    )
    consent_set(
        end_user=memory.end_user, agreed=True, source="api", now=timezone.now().replace(year=2026, month=11, day=1)
    )
    stopped = remembered(agent, "u_ravi", "Speaks Hindi.")
    services.memory_stop(end_user=stopped.end_user)
    deleted = remembered(agent, "u_gone", "Speaks Hindi.")
    services.memory_delete(end_user=deleted.end_user)
    page = member_client.get(tab(agent)).content.decode()
    rows = page.split('<div id="memories"')[1].split("</tbody>")[0].split('data-testid="memory-row"')[1:]
    assert len(rows) == 2  # a deleted memory is not "remembered"
    ravi, ananya = rows
    assert "u_ravi" in ravi and '<span class="pill bad">stopped</span>' in ravi and "<td>0</td>" in ravi
    assert "u_ananya" in ananya and "<td>3</td>" in ananya
    assert "+1 ~2 &minus;0" in ananya and "yes, 1 Nov 2026" in ananya
