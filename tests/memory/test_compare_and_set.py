"""Compare-and-set wherever a person writes a memory (issue 25): the Memory tab's add line, edit,
delete and Replace all carry the version of the memory their page was made on (a hidden field);
the API's set and delete carry it as `If-Match` (the `ETag` of a read). A write made on a version
the memory no longer reads changes nothing; add line appends under the row lock, so two at once
both land."""

import http.cookiejar
import re
import threading
import urllib.parse
import urllib.request
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from memory.models import Memory
from memory.store.services import CHANGED
from memory.store.version import version_of
from memory.writer import sweep as writer_sweep
from tests.api_helpers import api_for, api_in_process
from tests.memory.seed import chat, remembered

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
FIRST = "Prefers email over phone."


def url(name, memory, *extra):
    return reverse(f"memory:{name}", args=[memory.agent.public_id, memory.end_user_id, *extra])


def hidden(page: str, name: str) -> str:
    return re.search(rf'name="{name}" value="([^"]*)"', page).group(1)


def writer_run_adds_pune(agent, external_id):
    """A real quiet-window run (the offline writer) that adds "Works from the Pune office."."""
    _, last = chat(agent, external_id, [("user", "I work from the Pune office.")])
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    text = Memory.objects.get(end_user__external_id=external_id).text
    assert "Pune" in text, text
    return text


# --- The Memory tab ---------------------------------------------------------------------------


class WebSession:
    """A signed-in browser over real HTTP: the session cookie, the CSRF cookie and header."""

    def __init__(self, base_url: str, user):
        client = Client()
        client.force_login(user)
        self.base_url = base_url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.session = client.cookies["sessionid"].value

    def _request(self, path, data=None, headers=None):
        request = urllib.request.Request(self.base_url + path, data=data, method="POST" if data else "GET")
        request.add_header("Cookie", f"sessionid={self.session}" + self._csrf_cookie())
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        with self.opener.open(request, timeout=30) as response:
            return response.status, response.read().decode()

    def _csrf_cookie(self) -> str:
        token = self.csrf()
        return f"; csrftoken={token}" if token else ""

    def csrf(self) -> str:
        return next((cookie.value for cookie in self.jar if cookie.name == "csrftoken"), "")

    def get(self, path):
        return self._request(path)

    def post(self, path, fields: dict, *, htmx=True):
        headers = {"X-CSRFToken": self.csrf(), "Content-Type": "application/x-www-form-urlencoded"}
        if htmx:
            headers["HX-Request"] = "true"
        return self._request(path, urllib.parse.urlencode(fields).encode(), headers)


def add_two_lines_at_once(web, memory, version, texts) -> dict:
    """Both texts posted to add line at the same moment, from one page's version: text -> (status, body)."""
    barrier, answers, failures = threading.Barrier(2), {}, []

    def add(text):
        try:
            barrier.wait(timeout=10)
            answers[text] = web.post(url("line_add", memory), {"text": text, "version": version})
        except Exception as exc:  # surfaced below
            failures.append(exc)

    threads = [threading.Thread(target=add, args=(text,)) for text in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not failures, failures
    return answers


@pytest.mark.django_db(transaction=True)
def test_two_add_lines_at_once_over_http_keep_both_and_each_names_its_own_line(live_server, agent, user):
    if connection.vendor != "postgresql":
        pytest.skip("two requests holding row locks at once need PostgreSQL (SQLite serialises writers itself)")
    web = WebSession(live_server.url, user)
    for round_ in range(20):
        memory = remembered(agent, f"u_{round_}", FIRST)
        _, page = web.get(url("detail", memory))
        texts = (f"Likes topic {round_}a.", f"Likes topic {round_}b.")
        answers = add_two_lines_at_once(web, memory, hidden(page, "version"), texts)
        memory.refresh_from_db()
        assert memory.lines[0] == FIRST and sorted(memory.lines[1:]) == sorted(texts), (round_, memory.lines)
        said = {}
        for text, (status, body) in answers.items():
            assert status == 200
            said[text] = int(re.search(r"Line (\d+) added\.", body).group(1))
        # Each answer names the number its line really has, and only the later one says the
        # memory had changed meanwhile (it was made on the page from before the other's line).
        assert said == {text: memory.lines.index(text) + 1 for text in texts}, (said, memory.lines)
        changed = [text for text, (_, body) in answers.items() if "had changed since you opened it" in body]
        assert changed == [memory.lines[2]]


@pytest.mark.parametrize("htmx", [True, False])
def test_a_stale_replace_all_after_a_writer_run_is_refused_and_keeps_the_writers_line(member_client, agent, htmx):
    memory = remembered(agent, "u_ananya", FIRST)
    page = member_client.get(url("detail", memory)).content.decode()
    version = hidden(page, "version")
    assert version == version_of(memory)
    after_run = writer_run_adds_pune(agent, "u_ananya")

    answer = member_client.post(
        url("replace", memory), {"text": "Speaks Hindi.", "version": version}, follow=not htmx, **(HTMX if htmx else {})
    )
    shown = answer.content.decode()
    assert CHANGED in shown.replace("&#x27;", "'")
    memory.refresh_from_db()
    assert memory.text == after_run and "Speaks Hindi." not in memory.text
    if htmx:  # Replace all comes back out of band as the memory is now, with its new version
        assert 'id="replace-all" hx-swap-oob="true"' in shown and hidden(shown, "version") == version_of(memory)
        assert "Works from the Pune office." in shown.split('id="replace-all"')[1]

    fresh = member_client.post(url("replace", memory), {"text": "Speaks Hindi.", "version": version_of(memory)}, **HTMX)
    assert "Memory replaced." in fresh.content.decode()
    memory.refresh_from_db()
    assert memory.text == "Speaks Hindi."


def test_a_stale_edit_or_line_delete_is_refused_even_when_its_own_line_is_unchanged(member_client, agent):
    memory = remembered(agent, "u_ananya", FIRST)
    version = hidden(member_client.get(url("detail", memory)).content.decode(), "version")
    after_run = writer_run_adds_pune(agent, "u_ananya")
    edit = member_client.post(
        url("line_edit", memory, 1), {"text": "Prefers SMS.", "was": FIRST, "version": version}, **HTMX
    )
    delete = member_client.post(url("line_delete", memory, 1), {"was": FIRST, "version": version}, **HTMX)
    for answer in (edit, delete):
        assert CHANGED in answer.content.decode().replace("&#x27;", "'")
    memory.refresh_from_db()
    assert memory.text == after_run

    # Made on the memory as it is now, both go through; each answer carries the next version.
    page = member_client.post(
        url("line_edit", memory, 1), {"text": "Prefers SMS.", "was": FIRST, "version": version_of(memory)}, **HTMX
    ).content.decode()
    memory.refresh_from_db()
    assert memory.lines[0] == "Prefers SMS." and hidden(page, "version") == version_of(memory)
    member_client.post(
        url("line_delete", memory, 1), {"was": "Prefers SMS.", "version": hidden(page, "version")}, **HTMX
    )
    memory.refresh_from_db()
    assert memory.lines == ["Works from the Pune office."]


def test_the_line_form_carries_the_version_its_line_was_read_from(member_client, agent):
    memory = remembered(agent, "u_ananya", FIRST)
    form = member_client.get(url("line_edit", memory, 1), **HTMX).content.decode()
    assert hidden(form, "version") == version_of(memory) and hidden(form, "was") == FIRST


# --- The API: ETag and If-Match ------------------------------------------------------------------


@pytest.fixture
def api(team):
    return api_in_process(team)


def memory_path(agent, external_id):
    return f"/agents/{agent.public_id}/end-users/{external_id}/memory"


def test_a_read_carries_its_version_as_an_etag_and_a_write_answers_the_new_one(api, agent):
    path = memory_path(agent, "u_ananya")
    put = api.put(path, {"text": FIRST})
    memory = Memory.objects.get(end_user__external_id="u_ananya")
    assert put.status == 200 and put.headers["etag"] == f'"{version_of(memory)}"'
    assert api.get(path).headers["etag"] == put.headers["etag"]
    again = api.put(path, {"text": FIRST + "\nSpeaks Hindi."}, headers={"If-Match": put.headers["etag"]})
    assert again.status == 200 and again.headers["etag"] != put.headers["etag"]
    assert api.get(path).headers["etag"] == again.headers["etag"]


def test_a_stale_set_with_if_match_over_http_answers_412_and_changes_nothing(live_server, team, agent):
    api = api_for(live_server, team)
    path = memory_path(agent, "u_ananya")
    assert api.put(path, {"text": FIRST}).status == 200
    read = api.get(path)
    after_run = writer_run_adds_pune(agent, "u_ananya")
    runs = Memory.objects.get(end_user__external_id="u_ananya").runs.count()

    stale = api.put(path, {"text": "Speaks Hindi."}, headers={"If-Match": read.headers["etag"]})
    assert (stale.status, stale.code) == (412, "memory_changed"), stale.body
    memory = Memory.objects.get(end_user__external_id="u_ananya")
    assert memory.text == after_run and memory.runs.count() == runs

    fresh = api.get(path)
    assert fresh.headers["etag"] != read.headers["etag"]
    assert api.put(path, {"text": "Speaks Hindi."}, headers={"If-Match": fresh.headers["etag"]}).status == 200
    assert Memory.objects.get(end_user__external_id="u_ananya").text == "Speaks Hindi."


def test_without_if_match_the_last_write_wins_as_before(api, agent):
    path = memory_path(agent, "u_ananya")
    api.put(path, {"text": FIRST})
    writer_run_adds_pune(agent, "u_ananya")
    assert api.put(path, {"text": "Speaks Hindi."}).status == 200
    assert api.put(path, {"text": "Speaks Tamil."}, headers={"If-Match": "*"}).status == 200
    assert Memory.objects.get(end_user__external_id="u_ananya").text == "Speaks Tamil."


def test_a_weak_or_unknown_tag_never_matches(api, agent):
    path = memory_path(agent, "u_ananya")
    etag = api.put(path, {"text": FIRST}).headers["etag"]
    for header in (f"W/{etag}", '"not-a-version"', "garbage"):
        answer = api.put(path, {"text": "Speaks Hindi."}, headers={"If-Match": header})
        assert (answer.status, answer.code) == (412, "memory_changed"), header
    # One of several tags is enough.
    assert api.put(path, {"text": "Speaks Hindi."}, headers={"If-Match": f'"other", {etag}'}).status == 200


def test_a_stale_delete_with_if_match_answers_412_and_deletes_nothing(api, agent):
    path = memory_path(agent, "u_ananya")
    etag = api.put(path, {"text": FIRST}).headers["etag"]
    after_run = writer_run_adds_pune(agent, "u_ananya")
    stale = api.delete(path, headers={"If-Match": etag})
    assert (stale.status, stale.code) == (412, "memory_changed")
    assert Memory.objects.get(end_user__external_id="u_ananya").text == after_run
    assert api.delete(path, headers={"If-Match": api.get(path).headers["etag"]}).status == 204
    assert Memory.objects.get(end_user__external_id="u_ananya").text == ""


def test_a_set_for_a_new_end_user_made_on_the_empty_memory_goes_through(api, agent):
    """A person the agent only chatted with reads an empty memory; a set made on that read lands
    (the memory row the lock creates is no different from no row)."""
    chat(agent, "u_new", [("user", "Hello.")])
    read = api.get(memory_path(agent, "u_new"))
    answer = api.put(memory_path(agent, "u_new"), {"text": FIRST}, headers={"If-Match": read.headers["etag"]})
    assert answer.status == 200, answer.body


def test_memory_changed_is_in_the_one_error_table_and_the_headers_are_documented():
    from surfaces.http.errors import error_codes

    assert error_codes()["memory_changed"][0] == 412
    schema = Client().get("/api/schema/?format=json").json()
    item = schema["paths"]["/api/v1/agents/{agent_id}/end-users/{end_user_id}/memory"]
    for method in ("put", "delete"):
        assert "memory_changed" in item[method]["responses"]["412"]["description"]
        assert any(p["name"] == "If-Match" and p["in"] == "header" for p in item[method]["parameters"])
    for method in ("get", "put"):
        assert "ETag" in item[method]["responses"]["200"]["headers"]
