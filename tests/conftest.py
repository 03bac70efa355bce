"""Shared fixtures: teams, members, agents, keys, the loopback OpenAI-compatible server, and
Playwright on Debian's Chromium (never a downloaded browser)."""

import os

import pytest
from django.test import Client, testcases
from hypothesis import settings as hypothesis_settings

from agents import services as agent_services
from agents.models import Membership, Plan
from tests.fake_openai import FakeOpenAI

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


class _RawTargetQuietHandler(testcases.QuietWSGIRequestHandler):
    """The live server passes the request target as sent, as gunicorn and `manage.py runserver`
    do (agentnava_site.raw_path): an endUserId holding "/" is one path segment."""

    def get_environ(self):
        environ = super().get_environ()
        environ.setdefault("RAW_URI", self.path)
        return environ


testcases.QuietWSGIRequestHandler = _RawTargetQuietHandler

# Property tests draw the same examples on every run (a test that fails at random throws a whole
# CI run away); `HYPOTHESIS_PROFILE=explore make test-fast` draws new ones, to look for failures to
# fix and keep as fixed cases. A test's own @settings wins where it sets the same field (the schema
# fuzz keeps its own fixed seed).
hypothesis_settings.register_profile("fixed", derandomize=True, database=None)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def make_team(slug="acme", plan=Plan.TEAM, email=None):
    team, password = agent_services.team_create(
        slug=slug, name=slug.title(), plan=plan, owner_email=email or f"owner@{slug}.test"
    )
    user = Membership.objects.get(team=team).user
    user.set_password("pw-for-tests-1")
    user.save()
    return team, user


def _clear_process_state():
    from django.core.cache import caches

    from ops import counters

    for cache in caches.all():
        cache.clear()
    agent_services.api_key_cache_clear()
    with counters._lock:
        counters._local.clear()  # this process's counts (no REDIS_URL): /metrics starts at zero


@pytest.fixture(autouse=True)
def fresh_process_state():
    """Every test starts with empty caches: Django's caches (the API's throttle counts, the website
    chat's limits, sign-in attempts), the per-process key cache and this process's metric counts. On SQLite a rolled-back test's
    ids are used again by the next test, so a count kept under an id would otherwise carry over to
    another test's key or agent (and not on PostgreSQL, whose sequences never go back)."""
    _clear_process_state()
    yield
    _clear_process_state()


# This machine has no outside DNS: the documentation names (RFC 2606) resolve to example.com's
# public address for webhook registrations; every other name goes to the real resolver. Tests that
# are about resolution patch `webhooks.addresses.resolve` themselves.
DOCUMENTATION_ADDRESS = "93.184.215.14"


@pytest.fixture(autouse=True)
def documentation_names_resolve(monkeypatch):
    from webhooks import addresses

    real = addresses.resolve

    def resolve(host, port):
        if host.rstrip(".").lower().endswith(("example.com", "example.org", "example.net")):
            return [DOCUMENTATION_ADDRESS]
        return real(host, port)

    monkeypatch.setattr(addresses, "resolve", resolve)


@pytest.fixture
def team_and_user(db):
    return make_team("acme")


@pytest.fixture
def team(team_and_user):
    return team_and_user[0]


@pytest.fixture
def user(team_and_user):
    return team_and_user[1]


@pytest.fixture
def other_team(db):
    return make_team("globex")


@pytest.fixture
def agent(team, user):
    return agent_services.agent_create(
        team=team,
        name="Support",
        user=user,
        config={
            "actions": [{"name": "renew_plan", "label": "Renewed the plan"}],
            "memorySettings": {"on": True, "quietMinutes": 15},
        },
    )


@pytest.fixture
def member_client(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def fake_openai():
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def openai_engine(settings, fake_openai):
    settings.AGENTNAVA_ENGINE = "openai"
    settings.OPENAI_API_KEY = "sk-test-not-real"
    settings.OPENAI_BASE_URL = fake_openai.base_url
    settings.OPENAI_TIMEOUT_SECONDS = 2
    settings.OPENAI_MAX_RETRIES = 0
    return fake_openai


# --- Browser -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not os.path.exists(CHROMIUM):
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(f"REQUIRE_BROWSER=1 but {CHROMIUM} is missing: install Debian's chromium.")
        pytest.skip(f"{CHROMIUM} is not installed (set REQUIRE_BROWSER=1 to make this a failure).")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


def pytest_configure(config):
    """A previous run's SQLite test database can leave -wal/-shm files beside a deleted database
    file, which SQLite then reports as a disk I/O error: start clean."""
    from django.conf import settings as django_settings

    test_name = django_settings.DATABASES["default"].get("TEST", {}).get("NAME")
    if test_name and django_settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.remove(f"{test_name}{suffix}")
            except FileNotFoundError:
                pass
