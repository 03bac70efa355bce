"""Writes for teams, API keys, agents, drafts and versions, end users and conversations.

Every function here is the one way its state changes, so a rule or a guard cannot be skipped.
"""

import hashlib
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import F, OuterRef, Subquery
from django.utils import timezone

from agents import access, agent_config
from agents.end_user_ids import end_user_id_check
from agents.errors import AppError, InvalidConfig
from agents.models import (
    ActionRun,
    Agent,
    AgentDraft,
    AgentVersion,
    ApiKey,
    AuditEvent,
    Conversation,
    EndUser,
    KeyGeneration,
    Membership,
    Message,
    Team,
    UsageDay,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User as UserModel  # settings.AUTH_USER_MODEL is Django's own
    from django.core.cache.backends.redis import RedisCache

    from agents.access import Actor

User = get_user_model()

API_KEY_PREFIX = "ank_"


# --- Teams and members --------------------------------------------------------------------


@transaction.atomic
def team_create(*, slug: str, name: str, plan: str, owner_email: str) -> tuple[Team, str | None]:
    """Create a team and its owner. Returns the team and the owner's first password when
    this call made the user (None when the user existed). Refuses a slug in use."""
    if Team.objects.filter(slug=slug).exists():
        raise AppError("team_exists", f"A team with the slug {slug!r} already exists.")
    team = Team(slug=slug, name=name or slug.replace("-", " ").title(), plan=plan)
    team.full_clean()
    team.save()
    password = None
    user = User.objects.filter(email__iexact=owner_email).first()
    if user is None:
        password = secrets.token_urlsafe(12)
        user = User.objects.create_user(username=owner_email, email=owner_email, password=password)
    Membership.objects.create(team=team, user=user, role=Membership.Role.OWNER)
    return team, password


# --- API keys -------------------------------------------------------------------------------


def hash_api_key(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


def api_key_create(
    *, team: Team, name: str, created_by: "UserModel | None" = None, actor: "Actor | None" = None
) -> tuple[ApiKey, str]:
    """Create a key and return it with the raw secret, which is never stored or shown again. The key
    acts with `created_by`'s role in the team (`agents.access.actor_for_key`); recorded in the audit
    log when an `actor` (`agents.access.Actor`) asked for it."""
    raw = API_KEY_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        key = ApiKey.objects.create(
            team=team,
            name=(name or "API key")[:80],
            prefix=raw[:12],
            hashed_key=hash_api_key(raw),
            created_by=created_by,
        )
        if actor is not None:
            access.audit_record(
                team=team, actor=actor, action=AuditEvent.Action.API_KEY_CREATED, target=access.key_label(key)
            )
    return key, raw


def api_key_revoke(*, key: ApiKey, actor: "Actor | None" = None) -> None:
    """Revoke the key: refused at once by this process, and by every other within a second (the
    key generation, `key_generation_bump`). Recorded in the audit log when an `actor` asked."""
    with transaction.atomic():
        if ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now()):
            key.refresh_from_db(fields=["revoked_at"])
            if actor is not None:
                access.audit_record(
                    team=key.team, actor=actor, action=AuditEvent.Action.API_KEY_REVOKED, target=access.key_label(key)
                )
        key_generation_bump()
    api_key_cache_clear(key.hashed_key)


def api_keys_revoke_made_by(*, team: Team, user: "UserModel") -> int:
    """Revoke every active key of the team that `user` made (their removal from it); how many."""
    with transaction.atomic():
        revoked = ApiKey.objects.filter(team=team, created_by=user, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        key_generation_bump()
    api_key_cache_clear()
    return revoked


# Authentication of a key, cached per process: a key is looked up once per process per
# API_KEY_CACHE_SECONDS instead of once per request. Only keys that exist and are active are kept (an
# unknown secret always reaches the database), and the cache is bounded. Every change to a key's
# standing (revoked, its maker's role changed or removed, its team deleted) bumps the key generation,
# which every process reads before using its cache: from Redis on every request when the default cache
# is Redis (REDIS_URL), else from the database at most every API_KEY_GENERATION_CHECK_SECONDS. So a
# revocation holds on every process within a second; API_KEY_CACHE_SECONDS stays as the bound for a
# change made behind the services' back (a raw UPDATE).
_key_cache: dict[str, tuple[float, ApiKey]] = {}
_KEY_CACHE_MAX = 10_000


@dataclass
class _Generation:
    """The key generation this process's cached keys were read at, and when it was last read."""

    number: int | None = None
    checked_at: float = float("-inf")


_generation = _Generation()
GENERATION_CACHE_KEY = "agentnava:api-key-generation"
LAST_USED_EVERY = timedelta(seconds=60)


def _shared_cache() -> "RedisCache | None":
    """The default cache when it is Redis (shared by every process), else None."""
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    cache = caches["default"]  # the backend itself (`django.core.cache.cache` is a proxy to it)
    return cache if isinstance(cache, RedisCache) else None


def key_generation_read() -> int:
    shared = _shared_cache()
    if shared is not None:
        return int(shared.get(GENERATION_CACHE_KEY) or 0)
    return KeyGeneration.objects.filter(pk=1).values_list("number", flat=True).first() or 0


def key_generation_bump() -> None:
    """Tell every process to drop its cached keys, once the current transaction commits (before
    that, another process would read the key's old state again)."""

    def bump() -> None:
        api_key_cache_clear()  # this process: at once, whatever happens to the shared number
        shared = _shared_cache()
        if shared is not None:
            shared.add(GENERATION_CACHE_KEY, 0, timeout=None)
            shared.incr(GENERATION_CACHE_KEY)
        elif not KeyGeneration.objects.filter(pk=1).update(number=F("number") + 1):
            try:
                with transaction.atomic():
                    KeyGeneration.objects.create(pk=1, number=1)
            except IntegrityError:  # made meanwhile by another process
                KeyGeneration.objects.filter(pk=1).update(number=F("number") + 1)

    # robust: a failed bump (Redis away) is logged, never a 500 for a change that did commit; the other
    # processes then see it within API_KEY_CACHE_SECONDS.
    transaction.on_commit(bump, robust=True)


def _key_cache_check(now_mono: float) -> None:
    """Drop the cached keys when the key generation moved since they were read."""
    shared = _shared_cache() is not None
    if not shared and now_mono - _generation.checked_at < django_settings.API_KEY_GENERATION_CHECK_SECONDS:
        return
    number = key_generation_read()
    _generation.checked_at = now_mono
    if number != _generation.number:
        _key_cache.clear()
        _generation.number = number


def api_key_cache_clear(hashed_key: str | None = None) -> None:
    """Forget one cached key (by its hash), or all of them."""
    if hashed_key is None:
        _key_cache.clear()
        _generation.number, _generation.checked_at = None, float("-inf")
    else:
        _key_cache.pop(hashed_key, None)


def _key_lookup(hashed: str) -> ApiKey | None:
    """The active key with its team, its maker and the maker's role in the team now (`maker_role`);
    None for an unknown or revoked key, or one whose maker is no longer in the team. One query."""
    maker_role = Membership.objects.filter(team=OuterRef("team_id"), user=OuterRef("created_by_id")).values("role")
    key = (
        ApiKey.objects.select_related("team", "created_by")
        .annotate(maker_role=Subquery(maker_role[:1]))
        .filter(hashed_key=hashed, revoked_at__isnull=True)
        .first()
    )
    if key is None or (key.created_by_id is not None and key.maker_role is None):
        return None
    return key


def api_key_authenticate(*, raw_key: str) -> ApiKey | None:
    """The active key for this secret, with its team and its maker's role, or None. `last_used_at` is
    recorded at most once a minute per process, by an UPDATE that reads nothing."""
    if not raw_key or not raw_key.startswith(API_KEY_PREFIX) or len(raw_key) > 100:
        return None
    hashed = hash_api_key(raw_key)
    now_mono = time.monotonic()
    _key_cache_check(now_mono)
    cached = _key_cache.get(hashed)
    key: ApiKey | None
    if cached is not None and cached[0] > now_mono:
        key = cached[1]
    else:
        key = _key_lookup(hashed)
        if key is None:
            _key_cache.pop(hashed, None)
            return None
        if len(_key_cache) >= _KEY_CACHE_MAX:
            _key_cache.clear()
        _key_cache[hashed] = (now_mono + django_settings.API_KEY_CACHE_SECONDS, key)
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_EVERY:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now
    return key


# --- Agents, drafts and versions ----------------------------------------------------------


def _validated(agent: Agent, config: dict) -> dict:
    return agent_config.validate_config(config, plan_has_memory=agent.team.has_memory)


def _note_memory_switch(agent: Agent, old: dict | None, new: dict, now: datetime) -> None:
    was_on = bool(old and old["memorySettings"]["on"])
    is_on = new["memorySettings"]["on"]
    if was_on and not is_on:
        agent.memory_off_since = now
        agent.save(update_fields=["memory_off_since"])
    elif is_on and agent.memory_off_since is not None:
        agent.memory_off_since = None
        agent.save(update_fields=["memory_off_since"])


@transaction.atomic
def agent_create(*, team: Team, name: str, config: dict | None = None, user: "UserModel | None" = None) -> Agent:
    """Create an agent with version 1 published from `config` (defaults where missing)."""
    name = (name or "").strip()
    if not name or len(name) > 120:
        raise InvalidConfig("An agent needs a name of at most 120 characters.", field="name")
    agent = Agent(team=team, name=name)
    validated = _validated(agent, agent_config.merge_changes(agent_config.default_config(), config or {}))
    agent.save()
    AgentVersion.objects.create(
        agent=agent, number=1, config=validated, published_at=timezone.now(), published_by=user, source="create"
    )
    return agent


def agent_draft_config(agent: Agent) -> dict:
    draft = AgentDraft.objects.filter(agent=agent).first()
    return draft.config if draft else AgentVersion.objects.published(agent).config


@transaction.atomic
def agent_draft_update(*, agent: Agent, changes: dict, user: "UserModel | None" = None) -> AgentDraft | None:
    """Merge `changes` into the agent's one open draft, validated as on every path.

    Nothing is published. When the result equals the published version the draft is
    dropped (returns None). Refused changes raise and leave the draft as it was."""
    Agent.objects.select_for_update().filter(pk=agent.pk).first()
    published = AgentVersion.objects.published(agent)
    draft = AgentDraft.objects.filter(agent=agent).first()
    base = draft.config if draft else published.config
    new = _validated(agent, agent_config.merge_changes(base, changes))
    if new == published.config:
        if draft:
            draft.delete()
        return None
    if draft is None:
        draft = AgentDraft(agent=agent, based_on=published.number)
    draft.config = new
    draft.updated_by = user
    draft.save()
    return draft


def agent_draft_discard(*, agent: Agent) -> None:
    AgentDraft.objects.filter(agent=agent).delete()


@transaction.atomic
def _publish(*, agent: Agent, config: dict, user: "UserModel | None", source: str) -> AgentVersion:
    Agent.objects.select_for_update().filter(pk=agent.pk).first()
    previous = AgentVersion.objects.published(agent)
    now = timezone.now()
    version = AgentVersion.objects.create(
        agent=agent,
        number=previous.number + 1,
        config=config,
        published_at=now,
        published_by=user,
        source=source,
    )
    _note_memory_switch(agent, previous.config, config, now)
    AgentDraft.objects.filter(agent=agent).delete()
    return version


def agent_publish(*, agent: Agent, user: "UserModel | None" = None) -> AgentVersion:
    """Publish the open draft as the next numbered version (R2). Refuses when there is none,
    and re-validates (the team's plan may have changed since the draft was made)."""
    draft = AgentDraft.objects.filter(agent=agent).first()
    if draft is None:
        raise AppError("nothing_to_publish", "There are no unpublished changes.")
    return _publish(agent=agent, config=_validated(agent, draft.config), user=user, source="web")


def agent_update(*, agent: Agent, changes: dict, user: "UserModel | None" = None, source: str = "api") -> AgentVersion:
    """Apply `changes` to the published configuration and publish at once (the API, R2).
    An open web draft was based on the older version, so publishing supersedes it: it is
    discarded rather than left to undo this change on its next Publish. No change, no version."""
    published = AgentVersion.objects.published(agent)
    new = _validated(agent, agent_config.merge_changes(published.config, changes))
    if new == published.config:
        return published
    return _publish(agent=agent, config=new, user=user, source=source)


def agent_version_restore(*, agent: Agent, number: int, user: "UserModel | None" = None) -> AgentDraft | None:
    """Make an older version's configuration the draft; it waits for Publish."""
    version = AgentVersion.objects.filter(agent=agent, number=number).first()
    if version is None:
        raise AppError("version_not_found", f"Version {number} does not exist.", status=404)
    published = AgentVersion.objects.published(agent)
    AgentDraft.objects.filter(agent=agent).delete()
    return agent_draft_update(
        agent=agent, changes=agent_config.merge_changes(published.config, version.config), user=user
    )


def agent_delete(*, agent: Agent, actor: "Actor | None" = None) -> None:
    """Delete the agent and, by cascade, every end user, conversation and memory on it (R20);
    recorded in the team's audit log when an `actor` asked."""
    with transaction.atomic():
        if actor is not None:
            access.audit_record(
                team=agent.team,
                actor=actor,
                action=AuditEvent.Action.AGENT_DELETED,
                target=f"agent {agent.public_id} ({agent.name})",
            )
        agent.delete()


# --- End users and conversations --------------------------------------------------------


def end_user_get_or_create(*, agent: Agent, external_id: str) -> EndUser:
    """The agent's end user with exactly this id, made if new. An id not in its one normal form
    (`agents.end_user_ids`: NFC, no whitespace at the ends, no control characters) is refused,
    never trimmed into another person's."""
    end_user_id_check(external_id)
    try:
        with transaction.atomic():
            end_user, _ = EndUser.objects.get_or_create(agent=agent, external_id=external_id)
    except IntegrityError:  # a concurrent first chat created it
        end_user = EndUser.objects.get(agent=agent, external_id=external_id)
    return end_user


@dataclass(frozen=True)
class MemoryDecision:
    uses_memory: bool
    reason: str  # Conversation.MemoryOff value, "" when memory is used


def memory_off_reason(*, agent: Agent, version: AgentVersion, memory: bool, project: str, switch_on: bool) -> str:
    """This app's own reasons why a new conversation must not use memory (R4, R20, R23, R25, R3), in
    order: asked without it, off in the published version, a plan without memory, inside a project,
    the visitor's switch off. "" when none applies; the chat's surfaces (`surfaces.chat.start`) then
    ask consent's and memory's own gates."""
    off = Conversation.MemoryOff
    if not memory:
        return off.REQUESTED
    if not version.config["memorySettings"]["on"]:
        return off.SETTINGS
    if not agent.team.has_memory:
        return off.PLAN
    if project:
        return off.PROJECT
    if not switch_on:
        return off.SWITCH
    return ""


def project_checked(project: object) -> str:
    """A conversation's project id, stripped; refused unless text of at most 100 characters."""
    if not isinstance(project, str) or len(project) > 100:
        raise AppError("invalid_project", "project must be an id of at most 100 characters.", field="project")
    return project.strip()


def conversation_open(
    *,
    agent: Agent,
    end_user: EndUser,
    version: AgentVersion,
    decision: MemoryDecision,
    note: str = "",
    project: str = "",
    source: str,
    now: datetime | None = None,
) -> Conversation:
    """Save a new conversation whose memory decision is made (once, by `surfaces.chat.start`), with
    the note its agent receives when it uses memory (built by the caller from the memory as it is
    now: `memory.store.note`). A conversation without memory never holds a note."""
    now = now or timezone.now()
    conversation = Conversation(
        agent=agent,
        end_user=end_user,
        version=version,
        uses_memory=decision.uses_memory,
        memory_off_reason=decision.reason,
        memory_note=note if decision.uses_memory else "",
        project=project,
        source=source,
        started_at=now,
        last_activity_at=now,
    )
    conversation.save()
    return conversation


def _touch(conversation: Conversation, now: datetime) -> None:
    """Every message moves the activity time; with memory, the end of the quiet window is saved with
    it, as the caller marked it on the instance (`surfaces.chat.record`: `memory.store.due` owns the
    quiet-window queue), in the same UPDATE."""
    conversation.last_activity_at = now
    fields = ["last_activity_at"]
    if conversation.uses_memory:
        fields.append("memory_due_at")
    conversation.save(update_fields=fields)


@transaction.atomic
def message_record(*, conversation: Conversation, kind: str, text: str, now: datetime | None = None) -> Message:
    """Record one message of any kind; the person's own move the end user's last chat time. The chat's
    surfaces call it through `surfaces.chat.record.message_record`, which marks the due queue first (R11)."""
    if kind not in Message.Kind.values:
        raise AppError("invalid_kind", f"Unknown message kind {kind!r}.", field="type")
    now = now or timezone.now()
    message = Message.objects.create(conversation=conversation, kind=kind, text=text, created_at=now)
    _touch(conversation, now)
    if kind == Message.Kind.USER:
        EndUser.objects.filter(pk=conversation.end_user_id).update(last_chat_at=now)
    return message


@transaction.atomic
def action_run_record(*, conversation: Conversation, name: str, status: str, now: datetime | None = None) -> ActionRun:
    """Record an action that ran; called through `surfaces.chat.record.action_run_record` (R11), as
    `message_record` is."""
    if status not in ActionRun.Status.values:
        raise AppError("invalid_status", "status must be succeeded or failed.", field="status")
    if not isinstance(name, str) or not agent_config.ACTION_NAME_RE.match(name):
        raise AppError("invalid_action", "name must be an action name such as renew_plan.", field="name")
    now = now or timezone.now()
    run = ActionRun.objects.create(conversation=conversation, name=name, status=status, created_at=now)
    _touch(conversation, now)
    return run


def usage_count_reply(*, team: Team, tokens: int, now: datetime | None = None) -> None:
    """A chat reply counts toward the team's usage. Memory runs never call this (R3)."""
    day = (now or timezone.now()).date()
    UsageDay.objects.get_or_create(team=team, day=day)
    UsageDay.objects.filter(team=team, day=day).update(replies=F("replies") + 1, tokens=F("tokens") + tokens)
