"""Property-based fuzzing of the web app, signed in (hypothesis, bounded and derandomised so CI is
repeatable): whatever the query string, form fields or path ids (NUL, line separators, long and
non-Latin text, numbers out of range), no page is a server error, and a refused request (4xx)
changes nothing in the database."""

from urllib.parse import quote, urlencode

import pytest
from django.core.cache import cache
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agents import services as agent_services
from memory.store.services import memory_set
from tests.fuzz_helpers import fingerprint, form_text

FUZZ = settings(
    derandomize=True,
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

QUERY_NAMES = [
    "q",
    "after",
    "note_for",
    "a",
    "b",
    "partial",
    "n",
    "all",
    "builder",
    "instructions",
    "askFirst",
    "poll",
    "job",
]
GET_PAGES = [
    "/",
    "/agents/{a}/",
    "/agents/{a}/versions/",
    "/agents/{a}/memory/",
    "/agents/{a}/memory/check/",
    "/agents/{a}/memory/note/",
    "/agents/{a}/memory/try/",
    "/agents/{a}/memory/people/{e}/",
    "/agents/{a}/memory/people/{e}/lines/1/",
    "/agents/{a}/memory/people/{e}/erase/",
    "/settings/api-keys/",
    "/accounts/password/change/",
]
FORMS = {
    "/agents/new/": ["name"],
    "/team/switch/": ["team"],
    "/agents/{a}/": ["instructions", "guardrails", "actions"],
    "/agents/{a}/builder/": ["message", "next"],
    "/agents/{a}/publish/": ["next"],
    "/agents/{a}/discard/": ["next"],
    "/agents/{a}/memory/": [
        "on",
        "instructions",
        "keepForDays",
        "quietMinutes",
        "showSwitch",
        "askFirst",
        "privacyUrl",
    ],
    "/agents/{a}/memory/try/": ["n"],
    "/agents/{a}/memory/people/{e}/lines/1/": ["text", "was"],
    "/agents/{a}/memory/people/{e}/lines/1/delete/": ["was"],
    "/agents/{a}/memory/people/{e}/replace/": ["text"],
    "/agents/{a}/memory/people/{e}/stop/": ["stop"],
    "/agents/{a}/memory/people/{e}/erase/": ["confirm"],
    "/agents/{a}/versions/1/restore/": [],
    "/settings/api-keys/": ["name"],
    "/accounts/password/change/": ["old_password", "new_password1", "new_password2"],
}
PATH_TEMPLATES = [
    "/agents/{x}/",
    "/agents/{x}/memory/",
    "/agents/{x}/versions/",
    "/agents/{a}/memory/people/{x}/",
    "/agents/{a}/conversations/{x}/",
    "/agents/{a}/memory/apply/{x}/",
    "/settings/api-keys/{x}/revoke/",
]
form_value = form_text | st.sampled_from(
    ["on", "0", "1", "5", "15", "20", "-1", "99999999999999999999", "https://acme.test/p", ""]
)


@pytest.fixture
def site(agent, user, member_client):
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id="u_1")
    memory_set(end_user=end_user, text="Prefers email over phone.\nSpeaks Hindi.")
    return {"a": agent.public_id, "e": end_user.pk, "client": member_client}


def check(response, before):
    event(f"status {response.status_code}")
    assert response.status_code < 500, response.content[:300]
    if 400 <= response.status_code < 500:
        assert fingerprint() == before, f"refused with {response.status_code} yet the database changed"


def htmx_headers(htmx, target):
    return {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": target} if htmx else {}


@FUZZ
@given(
    page=st.sampled_from(GET_PAGES),
    query=st.lists(st.tuples(st.sampled_from(QUERY_NAMES) | form_text, form_value), max_size=4),
    htmx=st.booleans(),
    target=st.sampled_from(["memories", "apply", "x"]),
)
def test_pages_and_query_strings_never_make_a_server_error(site, page, query, htmx, target):
    cache.clear()
    url = page.format(**site) + "?" + urlencode(query)
    before = fingerprint()
    check(site["client"].get(url, **htmx_headers(htmx, target)), before)


@FUZZ
@given(form=st.sampled_from(sorted(FORMS)), data=st.data(), htmx=st.booleans())
def test_forms_never_make_a_server_error(site, form, data, htmx):
    cache.clear()
    names = FORMS[form]
    fields = {
        name: data.draw(form_value, label=name) for name in names if data.draw(st.booleans(), label=f"send {name}")
    }
    fields.update(data.draw(st.dictionaries(form_text, form_value, max_size=2), label="extra"))
    before = fingerprint()
    check(site["client"].post(form.format(**site), fields, **htmx_headers(htmx, "memories")), before)


@FUZZ
@given(template=st.sampled_from(PATH_TEMPLATES), ident=form_text, post=st.booleans())
def test_path_ids_never_make_a_server_error(site, template, ident, post):
    cache.clear()
    url = template.format(a=site["a"], x=quote(ident.encode(), safe=""))
    before = fingerprint()
    response = site["client"].post(url, {}) if post else site["client"].get(url)
    check(response, before)
