"""The website chat's own rules: who the visitor is, how often they may ask, and the one change a
visitor may make to a running chat (the switch).

* A visitor id is random, issued by the server and signed with the agent's identity secret
  (django.core.signing), so a visitor cannot take another person's id by typing it (R24): an id
  that does not verify is refused and a fresh one is issued. The signature carries its time: an id
  unused for VISITOR_ID_MAX_AGE (400 days) expires, and one in use is re-signed (renewed) once it is
  older than VISITOR_ID_RENEW_AFTER, so ids collected in bulk go stale. An id signed before
  timestamps (no time in it) is still taken once and renewed.
* A site's logged-in user is named by `data-end-user-id` plus `data-end-user-hash`, the hex
  HMAC-SHA256 of that id keyed with the agent's identity secret, checked here in constant time.
* Rate limits (the table here, counted by `surfaces.embed.throttles`) count per visitor, per IP
  address and per agent, in windows that start at the first hit; a refused request changes
  nothing. A per-address cap sits below each agent-wide one, so one address cannot take an agent's
  whole share (new visitor ids per address are capped too, so ids cannot be farmed quickly).
"""

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.utils import timezone

from agents.end_user_ids import end_user_id_check
from agents.errors import AppError, NotFound
from agents.models import Agent, AgentVersion, Conversation, EndUser
from agents.services import end_user_get_or_create
from consent.selectors import consent_state
from surfaces.chat.start import conversation_open, memory_decision

VISITOR_PREFIX = "visitor_"
VISITOR_SALT = "agentnava.embed.visitor"
CONVERSATION_SALT = "agentnava.embed.conversation"
MAX_SIGNED_ID_CHARS = 200
VISITOR_ID_MAX_AGE = timedelta(days=400)
VISITOR_ID_RENEW_AFTER = timedelta(days=1)


# --- Who is chatting ------------------------------------------------------------------------


def _signer(agent: Agent, salt: str) -> signing.Signer:
    return signing.Signer(key=agent.identity_secret, salt=salt)


def _visitor_signer(agent: Agent) -> signing.TimestampSigner:
    return signing.TimestampSigner(key=agent.identity_secret, salt=VISITOR_SALT)


def visitor_id_issue(agent: Agent, value: str | None = None) -> str:
    """A visitor id signed for this agent now: what the browser keeps in localStorage. A new
    random one, or `value` (an existing visitor's) re-signed to renew it."""
    return _visitor_signer(agent).sign(value or VISITOR_PREFIX + secrets.token_urlsafe(18))


def visitor_id_check(agent: Agent, signed_id: Any) -> tuple[str, bool] | None:
    """(the end-user id inside a signed visitor id, whether it is due for renewal), or None when
    it was not issued for this agent or has expired (unused for VISITOR_ID_MAX_AGE)."""
    if not isinstance(signed_id, str) or not signed_id or len(signed_id) > MAX_SIGNED_ID_CHARS:
        return None
    try:  # TimestampSigner signs "value:time" with this same signer
        inner = _signer(agent, VISITOR_SALT).unsign(signed_id)
    except signing.BadSignature:
        return None
    value, sep, stamp = inner.rpartition(":")
    if not sep:  # signed before ids carried their time: taken, and renewed at once
        value, renew = inner, True
    else:
        try:
            age = time.time() - signing.b62_decode(stamp)
        except ValueError:
            return None
        if age > VISITOR_ID_MAX_AGE.total_seconds():
            return None
        renew = age > VISITOR_ID_RENEW_AFTER.total_seconds()
    return (value, renew) if value.startswith(VISITOR_PREFIX) and ":" not in value else None


def visitor_id_verify(agent: Agent, signed_id: Any) -> str | None:
    """The end-user id inside a signed visitor id, or None when it was not issued for this agent
    (or has expired)."""
    checked = visitor_id_check(agent, signed_id)
    return checked[0] if checked else None


def end_user_hash(agent: Agent, end_user_id: str) -> str:
    """What the site's server puts in `data-end-user-hash` for a logged-in user."""
    return hmac.new(agent.identity_secret.encode(), end_user_id.encode(), hashlib.sha256).hexdigest()


def same_secret(expected: str, given: str) -> bool:
    """Constant-time equality that cannot raise: `hmac.compare_digest` refuses non-ASCII str, so
    both sides are compared as bytes (a lone surrogate is kept, never an error)."""
    return hmac.compare_digest(expected.encode("utf-8", "surrogatepass"), given.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Identity:
    external_id: str  # the EndUser.external_id
    visitor_id: str | None  # the signed id to keep in the browser (None for a site's logged-in user)
    replaced: bool  # the visitor id sent was refused and this is a fresh one
    fresh: bool  # a new visitor id was issued by this request


def identity_resolve(
    agent: Agent, *, visitor_id: Any = None, end_user_id: Any = None, end_user_hash_given: Any = None
) -> Identity:
    """Who this request speaks for. A site's user needs the matching hash (refused with 403
    otherwise); a visitor id that does not verify is replaced by a fresh one. Writes nothing."""
    if end_user_id not in (None, ""):
        # The id is checked in its one form before the hash: the hash then signs exactly the id
        # that is looked up (a hash for "bob" never opens " bob" or "bob\n": they are refused).
        end_user_id_check(end_user_id)
        expected = end_user_hash(agent, end_user_id)
        if not isinstance(end_user_hash_given, str) or not same_secret(expected, end_user_hash_given.lower()):
            raise AppError(
                "invalid_end_user_hash",
                "endUserHash does not match endUserId: it must be the HMAC-SHA256 of the id with the agent's identity secret.",
                field="endUserHash",
                status=403,
            )
        return Identity(end_user_id, None, False, False)
    checked = visitor_id_check(agent, visitor_id)
    if checked is not None:
        external_id, renew = checked
        return Identity(external_id, visitor_id_issue(agent, external_id) if renew else visitor_id, False, False)
    fresh = visitor_id_issue(agent)
    issued_to = visitor_id_verify(agent, fresh)
    assert issued_to is not None  # issued for this agent a moment ago
    return Identity(issued_to, fresh, bool(visitor_id), True)


def conversation_token(conversation: Conversation) -> str:
    """Proves to the server that a browser started this conversation; required to use it."""
    return _signer(conversation.agent, CONVERSATION_SALT).sign(conversation.public_id).split(":", 1)[1]


def conversation_for_token(public_id: str, token: Any) -> Conversation:
    """The conversation if the token is its own; otherwise not found, exactly like a missing one."""
    conversation = (
        Conversation.objects.select_related("agent__team", "version", "end_user").filter(public_id=public_id).first()
    )
    if conversation is None or not isinstance(token, str) or len(token) > 100:
        raise NotFound("conversation_not_found", "No such conversation.")
    try:
        _signer(conversation.agent, CONVERSATION_SALT).unsign(f"{public_id}:{token}")
    except signing.BadSignature:
        raise NotFound("conversation_not_found", "No such conversation.") from None
    return conversation


# --- Rate limits ----------------------------------------------------------------------------

# scope: (how many, in how many seconds). Override any of them with settings.EMBED_RATE_LIMITS.
DEFAULT_RATE_LIMITS = {
    "visitor_messages": (20, 60),
    "agent_messages": (600, 60),
    "visitor_requests": (30, 60),  # starting chats, answering consent, the switch, resuming
    "agent_requests": (1200, 60),
    "ip_new_visitors": (20, 60),  # fresh visitor ids issued to one IP address
    # Per IP address, well below the agent-wide caps, so one address cannot take an agent's share.
    "ip_messages": (60, 60),
    "ip_requests": (120, 60),  # the config, starting chats, consent, the switch, resuming
}
RATE_MESSAGES = {
    "visitor_messages": "Too many messages from this chat",
    "agent_messages": "This assistant is receiving too many messages right now",
    "visitor_requests": "Too many requests from this chat",
    "agent_requests": "This assistant is receiving too many requests right now",
    "ip_new_visitors": "Too many new chats from this address",
    "ip_messages": "Too many messages from this address",
    "ip_requests": "Too many requests from this address",
}


def rate_limits() -> dict[str, tuple[int, int]]:
    """Each scope's (how many, in how many seconds), counted by `surfaces.embed.throttles`."""
    return {**DEFAULT_RATE_LIMITS, **getattr(settings, "EMBED_RATE_LIMITS", {})}


# --- Starting a chat ----------------------------------------------------------------------


@dataclass(frozen=True)
class EmbedStart:
    end_user: EndUser
    conversation: Conversation | None  # None: ask first, no chat started

    @property
    def ask(self) -> bool:
        return self.conversation is None


@transaction.atomic
def embed_chat_start(*, agent: Agent, external_id: str, memory: bool, switch_on: bool) -> EmbedStart:
    """Start a website chat on the published version (R24-R26): the end user found or made once,
    the memory decision made once. Where no switch is shown, none can be off. With askFirst on and
    no answer from this end user yet, no chat starts: the answer says to ask first (a yes or no,
    then a new start). A "no" already given starts a chat without memory."""
    end_user = end_user_get_or_create(agent=agent, external_id=external_id)
    version = AgentVersion.objects.published(agent)
    settings = version.config["memorySettings"]
    if not (settings["on"] and agent.team.has_memory and settings["showSwitch"]):
        switch_on = True
    decision = memory_decision(
        agent=agent, end_user=end_user, version=version, memory=memory, project="", switch_on=switch_on, source="embed"
    )
    if decision.reason == Conversation.MemoryOff.CONSENT and consent_state(end_user) is None:
        return EmbedStart(end_user, None)
    conversation = conversation_open(agent=agent, end_user=end_user, version=version, decision=decision, source="embed")
    return EmbedStart(end_user, conversation)


# --- The visitor's switch -------------------------------------------------------------------


@transaction.atomic
def conversation_memory_switch_off(*, conversation: Conversation) -> Conversation:
    """The visitor's switch (R25), when the team shows it: memory off for the rest of this chat.
    The chat stops using its note, and none of its messages (earlier ones included) will be read
    into the memory. Turning memory on again only happens by starting a new chat."""
    if not conversation.version.config["memorySettings"]["showSwitch"]:
        raise AppError("switch_not_shown", "This assistant does not offer a memory switch.", status=403)
    conversation = Conversation.objects.select_for_update().get(pk=conversation.pk)
    if conversation.uses_memory:
        conversation.uses_memory = False
        conversation.memory_off_reason = Conversation.MemoryOff.SWITCH
        conversation.memory_note = ""
        conversation.memory_due_at = None
        conversation.memory_off_at = timezone.now()
        conversation.save(
            update_fields=["uses_memory", "memory_off_reason", "memory_note", "memory_due_at", "memory_off_at"]
        )
    return conversation
