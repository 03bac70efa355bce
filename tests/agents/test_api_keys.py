"""API keys: only hashes stored, revocation at once, last use recorded; operator commands."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from agents import services
from agents.models import ApiKey, KeyGeneration, Membership, Team


def test_a_key_is_stored_as_its_hash_and_authenticates(team):
    key, raw = services.api_key_create(team=team, name="ci")
    stored = ApiKey.objects.get(pk=key.pk)
    assert raw not in (stored.hashed_key, stored.prefix, stored.name)
    assert len(stored.hashed_key) == 64
    found = services.api_key_authenticate(raw_key=raw)
    assert found.pk == key.pk and found.last_used_at is not None


def test_a_revoked_key_stops_at_once(team):
    key, raw = services.api_key_create(team=team, name="ci")
    services.api_key_revoke(key=key)
    assert services.api_key_authenticate(raw_key=raw) is None


def test_a_cached_key_costs_no_query_and_last_use_is_written_at_most_once_a_minute(team, django_assert_num_queries):
    key, raw = services.api_key_create(team=team, name="ci")
    # The key generation (no Redis here), the lookup, and the first last_used_at (an UPDATE, no read).
    with django_assert_num_queries(3):
        services.api_key_authenticate(raw_key=raw)
    for _ in range(3):
        with django_assert_num_queries(0):
            assert services.api_key_authenticate(raw_key=raw).team == team


def test_a_key_revoked_by_another_process_is_refused_within_the_cache_lifetime(team, monkeypatch, settings):
    """Another process's revocation is an UPDATE this process does not see: the cached key is used
    until API_KEY_CACHE_SECONDS pass, then the database says no."""
    settings.API_KEY_CACHE_SECONDS = 5
    clock = [1000.0]
    monkeypatch.setattr(services.time, "monotonic", lambda: clock[0])
    key, raw = services.api_key_create(team=team, name="ci")
    assert services.api_key_authenticate(raw_key=raw) is not None
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())  # "another process"
    clock[0] += 4
    assert services.api_key_authenticate(raw_key=raw) is not None
    clock[0] += 1.5
    assert services.api_key_authenticate(raw_key=raw) is None


def test_a_revocation_in_another_process_holds_here_within_the_generation_check(team, monkeypatch, settings):
    """Without Redis, another process's revocation moves the key generation in the database; this
    process reads it at most every API_KEY_GENERATION_CHECK_SECONDS and then drops its cached keys."""
    settings.API_KEY_CACHE_SECONDS = 60
    settings.API_KEY_GENERATION_CHECK_SECONDS = 0.5
    clock = [1000.0]
    monkeypatch.setattr(services.time, "monotonic", lambda: clock[0])
    key, raw = services.api_key_create(team=team, name="ci")
    assert services.api_key_authenticate(raw_key=raw) is not None
    # "Another process": the revocation's rows and its generation bump, without this process's cache.
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())
    KeyGeneration.objects.update_or_create(pk=1, defaults={"number": services.key_generation_read() + 1})
    clock[0] += 0.4
    assert services.api_key_authenticate(raw_key=raw) is not None  # not checked again yet
    clock[0] += 0.2
    assert services.api_key_authenticate(raw_key=raw) is None


@pytest.mark.django_db(transaction=True)
def test_revoking_deleting_the_team_and_changing_the_makers_role_move_the_generation(team, user):
    key, _ = services.api_key_create(team=team, name="ci", created_by=user)
    seen = [services.key_generation_read()]
    services.api_key_revoke(key=key)
    seen.append(services.key_generation_read())
    Membership.objects.filter(team=team, user=user).update(role="admin")  # behind the services: no signal
    Membership.objects.get(team=team, user=user).save()  # a save is seen (the admin site's path)
    seen.append(services.key_generation_read())
    team.delete()
    seen.append(services.key_generation_read())
    assert seen == sorted(seen) and len(set(seen)) == 4, seen


def test_last_use_is_recorded_again_after_a_minute(team, monkeypatch):
    key, raw = services.api_key_create(team=team, name="ci")
    first = services.api_key_authenticate(raw_key=raw).last_used_at
    later = first + timedelta(seconds=61)
    monkeypatch.setattr(services.timezone, "now", lambda: later)
    services.api_key_authenticate(raw_key=raw)
    assert ApiKey.objects.get(pk=key.pk).last_used_at == later


def test_a_wrong_key_does_not_authenticate(team):
    services.api_key_create(team=team, name="ci")
    assert services.api_key_authenticate(raw_key="ank_nope") is None
    assert services.api_key_authenticate(raw_key="") is None


def test_create_team_prints_the_first_password_once_and_refuses_a_duplicate(db):
    out = StringIO()
    call_command("create_team", "initech", "--plan", "team", "--owner", "ops@initech.test", stdout=out)
    team = Team.objects.get(slug="initech")
    assert team.plan == "team"
    password = out.getvalue().split("(shown once): ")[1].strip()
    owner = Membership.objects.get(team=team).user
    assert owner.check_password(password)
    with pytest.raises(CommandError):
        call_command("create_team", "initech", "--owner", "x@initech.test", stdout=StringIO())


def test_create_api_key_prints_a_working_key(db):
    call_command("create_team", "initech", "--owner", "ops@initech.test", stdout=StringIO())
    out = StringIO()
    call_command("create_api_key", "--team", "initech", stdout=out)
    raw = out.getvalue().strip()
    assert services.api_key_authenticate(raw_key=raw).team.slug == "initech"
    with pytest.raises(CommandError):
        call_command("create_api_key", "--team", "nope", stdout=StringIO())


@pytest.mark.django_db(transaction=True)
def test_a_request_whose_team_went_while_its_key_was_cached_answers_401_not_500(team, user, agent, monkeypatch):
    """The window before a process sees the new key generation: the key is still in its cache, the
    team is gone, and a write fails on the missing team. The answer is the key's 401."""
    from agents import receivers
    from tests.api_helpers import InProcessApi

    _, raw = services.api_key_create(team=team, name="ci", created_by=user)
    api = InProcessApi(raw)
    assert api.get("/agents").status == 200  # cached now
    monkeypatch.setattr(receivers, "key_generation_bump", lambda: None)  # not seen here yet
    Team.objects.filter(pk=team.pk).delete()
    for method, path, body in (
        ("POST", "/agents", {"name": "Sales"}),
        ("POST", f"/agents/{agent.public_id}/conversations", {"endUserId": "u_1"}),
    ):
        answer = api.call(method, path, body)
        assert (answer.status, answer.code) in {(401, "invalid_api_key"), (404, "agent_not_found")}, answer.body
    assert api.call("POST", "/agents", {"name": "Sales"}).status == 401
