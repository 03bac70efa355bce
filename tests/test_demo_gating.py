"""Demo only where meant: `seed_demo` refuses with DEBUG off unless --force, and /demo/chat/
answers 404 unless DEBUG or DEMO=1 (then it hands out a signed-in user's hash)."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from agents.models import Team


def test_seed_demo_refuses_with_debug_off(db, settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="--force"):
        call_command("seed_demo", stdout=io.StringIO())
    assert not Team.objects.filter(slug="demo").exists()
    call_command("seed_demo", "--force", stdout=io.StringIO())
    assert Team.objects.filter(slug="demo").exists()


def test_seed_demo_runs_with_debug_on(db, settings):
    settings.DEBUG = True
    call_command("seed_demo", stdout=io.StringIO())
    assert Team.objects.filter(slug="demo").exists()


def test_the_demo_page_is_404_unless_debug_or_demo(db, settings):
    call_command("seed_demo", "--force", stdout=io.StringIO())
    client = Client()
    settings.DEBUG, settings.DEMO = False, False
    response = client.get("/demo/chat/?user=u_ananya")
    assert response.status_code == 404 and b"data-end-user-hash" not in response.content
    settings.DEMO = True
    assert b"data-end-user-hash" in client.get("/demo/chat/?user=u_ananya").content
