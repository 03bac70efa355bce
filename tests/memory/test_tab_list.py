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
from memory.store.people import people_page
from tests.memory.seed import chat, remembered


def tab(agent):
    """The People page of the Memory tab, where the list lives."""
    return reverse("memory:people", args=[agent.public_id])


def ids_on(page: str) -> list[str]:
    rows = page.split('<div id="memories"')[1]
    return re.findall(r'data-testid="memory-row">\s*<th scope="row"[^>]*><a href="[^"]+">([^<]+)</a>', rows)


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
    assert (
        "u_ravi" in ravi and '<span class="pill bad">stopped</span>' in ravi and '<td data-label="Lines">0</td>' in ravi
    )
    assert "u_ananya" in ananya and '<td data-label="Lines">3</td>' in ananya
    assert "+1 ~2 &minus;0" in ananya and "yes, 1 Nov 2026" in ananya


def test_newest_change_first_is_the_default_whoever_was_seen_first(member_client, agent):
    """R16: the list is by the memory's newest change, not by when someone was first seen; those with
    no memory yet come after everyone with one."""
    base = timezone.now() - timedelta(days=2)
    remembered(agent, "u_old", "Prefers email over phone.", at=base)
    remembered(agent, "u_mid", "Speaks Hindi.", at=base + timedelta(hours=1))
    remembered(agent, "u_new", "Is on the Pro plan.", at=base + timedelta(hours=2))
    # The first seen is edited last: it moves to the top.
    services.memory_line_add(end_user=Memory.objects.get(end_user__external_id="u_old").end_user, text="Uses a Mac.")
    page = member_client.get(tab(agent)).content.decode()
    assert ids_on(page) == ["u_old", "u_new", "u_mid"]
    assert '<option value="changed" selected>' in page
    by_first_seen = member_client.get(tab(agent), {"order": "first_seen"}).content.decode()
    assert ids_on(by_first_seen) == ["u_new", "u_mid", "u_old"]
    by_id = member_client.get(tab(agent), {"order": "id"}).content.decode()
    assert ids_on(by_id) == ["u_mid", "u_new", "u_old"]
    assert ids_on(member_client.get(tab(agent), {"order": "nonsense"}).content.decode()) == ids_on(page)


@pytest.mark.parametrize("order", ["changed", "first_seen", "id"])
def test_every_order_pages_by_keyset_without_gaps_or_repeats(agent, order):
    base = timezone.now() - timedelta(days=3)
    # Changes in another order than first seen (and than the ids), so each order differs.
    for i in range(23):
        remembered(
            agent, f"u_{(i * 7) % 23:02}", "Prefers email over phone.", at=base + timedelta(minutes=(i * 5) % 23)
        )
    chat(agent, "u_chat_only", [("user", "Hello.")], start=timezone.now())  # chatted, nothing kept yet
    everyone = people_page(agent, order=order, limit=100).rows
    seen, after, positions = [], "", []
    while True:
        page = people_page(agent, order=order, after=after, limit=5)
        seen += page.rows
        positions.append((page.first, page.last))
        if not page.next_cursor:
            break
        after = page.next_cursor
    assert [p.external_id for p in seen] == [p.external_id for p in everyone] and len(seen) == 24
    assert positions[:2] == [(1, 5), (6, 10)]
    if order == "changed":
        assert seen[-1].external_id == "u_chat_only"  # no memory: after everyone with one
    if order == "id":
        assert [p.external_id for p in seen] == sorted(p.external_id for p in seen)


def test_a_page_link_keeps_the_order(member_client, agent, many):
    page = member_client.get(tab(agent), {"order": "id"}).content.decode()
    older = re.search(r'data-testid="older" href="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert "order=id" in older
    assert ids_on(member_client.get(older).content.decode())[0] == "u_050"


def test_the_position_counts_the_rows_before_the_page(member_client, agent, many):
    page = member_client.get(tab(agent)).content.decode()
    older = re.search(r'data-testid="older" href="([^"]+)"', page).group(1).replace("&amp;", "&")
    second = member_client.get(older).content.decode()
    assert 'aria-live="polite">51&ndash;100 of 120</p>' in second
