"""Who holds access, as a property (issue 23): hypothesis drives random sequences of role changes,
removals, key creations and revocations by random members of one team, and after every step checks:

- the team always has an owner;
- a step the actor's role does not allow is refused (403) and changes nothing;
- a key authenticates exactly when it is not revoked and its maker is still in the team, and then
  acts with its maker's role as it is now (the key cache is dropped through the key generation on
  commit, as in production: the step's on-commit callbacks run);
- every step that was done is one audit row, and a refused one none.
"""

from itertools import count

import pytest
from django.contrib.auth import get_user_model
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents import access, roles
from agents import services as agent_services
from agents import team as team_services
from agents.errors import AppError
from agents.models import ApiKey, AuditEvent, Membership
from tests.conftest import make_team

User = get_user_model()
PEOPLE = 4
_teams = count()

person = st.integers(min_value=0, max_value=PEOPLE - 1)
step = st.one_of(
    st.tuples(st.just("role"), person, person, st.sampled_from(roles.ROLES)),
    st.tuples(st.just("remove"), person, person),
    st.tuples(st.just("make_key"), person),
    st.tuples(st.just("revoke"), person, st.integers(min_value=0, max_value=20)),
)


def _world():
    team, owner = make_team(f"prop-{next(_teams)}")
    users = [owner]
    for n in range(1, PEOPLE):
        user = User.objects.create_user(username=f"p{n}-{team.slug}", email=f"p{n}@{team.slug}.test")
        Membership.objects.create(team=team, user=user, role=roles.MEMBER)
        users.append(user)
    keys = {}  # raw -> key, one made by each person before roles (so members hold keys too)
    for user in users:
        key, raw = agent_services.api_key_create(team=team, name=f"key of {user.email}", created_by=user)
        keys[raw] = key
    return team, users, keys


def _do(team, users, keys, op) -> bool:
    """Carry out one step as its actor; whether it was done (False: refused by the role table)."""
    kind, actor_index = op[0], op[1]
    actor = access.actor_for_user(team, users[actor_index])
    if actor.role is None:  # removed: they can no longer act at all
        return False
    if kind == "make_key":
        access.require(actor, "api_keys")
        key, raw = agent_services.api_key_create(team=team, name="made", created_by=actor.user, actor=actor)
        keys[raw] = key
        return True
    if kind == "revoke":
        access.require(actor, "api_keys")
        active = sorted(k.pk for k in ApiKey.objects.filter(team=team, revoked_at__isnull=True))
        if not active:
            return False
        agent_services.api_key_revoke(key=ApiKey.objects.get(pk=active[op[2] % len(active)]), actor=actor)
        return True
    target = Membership.objects.filter(team=team, user=users[op[2]]).select_related("user").first()
    if target is None or target.user == actor.user:
        return False
    if kind == "role":
        before = target.role
        team_services.member_role_change(team=team, membership=target, role=op[3], actor=actor)
        return before != op[3]
    team_services.member_remove(team=team, membership=target, actor=actor)
    return True


def _check(team, keys):
    assert Membership.objects.filter(team=team, role=roles.OWNER).exists(), "the team has no owner"
    role_of = dict(Membership.objects.filter(team=team).values_list("user_id", "role"))
    for raw, key in keys.items():
        key.refresh_from_db()
        found = agent_services.api_key_authenticate(raw_key=raw)
        should = key.revoked_at is None and key.created_by_id in role_of
        assert (found is not None) == should, (key.name, key.revoked_at, key.created_by_id in role_of)
        if found is not None:
            assert access.actor_for_key(found).role == role_of[key.created_by_id]


@pytest.mark.django_db
@settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(step, min_size=1, max_size=20))
def test_access_holds_over_any_sequence_of_team_actions(django_capture_on_commit_callbacks, steps):
    with django_capture_on_commit_callbacks(execute=True):
        team, users, keys = _world()
    _check(team, keys)
    for op in steps:
        memberships = sorted(Membership.objects.filter(team=team).values_list("pk", "role"))
        revoked = sorted(ApiKey.objects.filter(team=team).values_list("pk", "revoked_at"))
        audited = AuditEvent.objects.filter(team=team).count()
        try:
            with django_capture_on_commit_callbacks(execute=True):
                done = _do(team, users, keys, op)
        except AppError as refused:
            assert refused.status in (403, 409), refused.code  # the role table, or the last owner
            done = False
            assert sorted(Membership.objects.filter(team=team).values_list("pk", "role")) == memberships
            assert sorted(ApiKey.objects.filter(team=team).values_list("pk", "revoked_at")) == revoked
        assert AuditEvent.objects.filter(team=team).count() == audited + (1 if done else 0), op
        _check(team, keys)
