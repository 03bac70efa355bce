"""Idempotency keys, the way Stripe has them: a write (POST, PUT, PATCH, DELETE) under /api/v1 may
carry `Idempotency-Key: <up to 255 visible ASCII characters>`, and then sending it again is safe.

- The first request with a key claims it for the team (a row, unique per team and key) and runs; its
  answer (status, body, ETag) is kept with the key for 24 hours.
- The same key with the same request (method, route and JSON body, compared after parsing) within
  those 24 hours answers that first answer again, with `Idempotent-Replayed: true`, and does nothing.
- The same key with another request answers 422 `idempotency_key_reused`; while the first request
  is still being answered, 409 `idempotency_key_in_use` (with `Retry-After: 1`).
- Keys are per team: another team's same key is another key.
- An answer that is a server error (5xx) or that was never given (the view raised) is not kept: the
  key is released, so a retry runs again (nothing was recorded). A claim left by a process that died
  is taken over after IN_FLIGHT_TAKEOVER.
- Rows older than 24 hours are deleted by the `idempotency-keys-expire` schedule (ops.schedules);
  until then an old row is simply not used. An answer that may hold a person's data goes with it:
  erasing the end user or deleting the agent deletes it (foreign keys), and so does deleting,
  stopping or expiring their memory (`forget_answers`, on the memory's `memory_changed` event), so a
  kept answer never outlives what it showed.

One mixin, `IdempotentWrites`, on the API's base class (surfaces.http.base.TeamApi) does this for
every write; `IdempotencySchema` documents it on every write operation."""

import hashlib
import json
import re
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.dispatch import receiver
from django.http import HttpResponse
from django.utils import timezone
from rest_framework.response import Response

from agents.errors import AppError
from agents.models import Agent, Conversation, EndUser, Team
from memory.store.events import MemoryChanged, memory_changed
from surfaces.http.errors import ERROR_CODES
from surfaces.models import IdempotencyKey

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
KEY_PATTERN = r"^[!-~]{1,255}$"  # visible ASCII, no spaces: a UUID, an order id, base64
WINDOW = timedelta(hours=24)
IN_FLIGHT_TAKEOVER = timedelta(minutes=5)
KEPT_HEADERS = ("ETag",)


class KeyInUse(AppError):
    status = 409

    def __init__(self) -> None:
        super().__init__("idempotency_key_in_use", ERROR_CODES["idempotency_key_in_use"][1], field=HEADER)


class Replay(Exception):
    """Raised by a claim whose key was answered already: the view does not run, this answers."""

    def __init__(self, row: IdempotencyKey) -> None:
        super().__init__(row.key)
        self.row = row

    def response(self) -> HttpResponse:
        row = self.row
        answer = HttpResponse(bytes(row.body), status=row.status, content_type=row.content_type or None)
        for name, value in row.headers.items():
            answer[name] = value
        answer[REPLAYED_HEADER] = "true"
        return answer


# --- Services -------------------------------------------------------------------------------------


def key_from_request(request) -> str | None:
    """The request's Idempotency-Key, or None when it sent none; a malformed one is refused (400)."""
    key = request.headers.get(HEADER)
    if key is None:
        return None
    if not re.fullmatch(KEY_PATTERN, key):
        raise AppError(
            "invalid_request", f"{HEADER}: 1 to 255 visible ASCII characters, no spaces.", status=400, field=HEADER
        )
    return key


def request_fingerprint(*, method: str, route: str, kwargs: dict, body: bytes) -> str:
    """What makes two requests the same request: method, route (the view and its path arguments) and
    the body, compared as JSON when it is JSON (so key order and spacing do not count)."""
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    except ValueError:
        canonical = body
    head = json.dumps([method, route, sorted((str(k), str(v)) for k, v in kwargs.items())]).encode()
    return hashlib.sha256(head + b"\n" + canonical).hexdigest()


def idempotency_key_claim(*, team: Team, key: str, fingerprint: str, now: datetime) -> IdempotencyKey:
    """Claim `key` for this request, or refuse: Replay (answered already), KeyInUse (409, still being
    answered) or AppError 422 (another request's key). A key older than WINDOW is a new key."""
    for _ in range(3):  # a row can vanish between the insert that collided and the read (expired)
        try:
            with transaction.atomic():
                return IdempotencyKey.objects.create(team=team, key=key, fingerprint=fingerprint, created_at=now)
        except IntegrityError:
            pass
        row = IdempotencyKey.objects.filter(team=team, key=key).first()
        if row is None:
            continue
        if row.created_at <= now - WINDOW:
            IdempotencyKey.objects.filter(pk=row.pk, created_at=row.created_at).delete()
            continue
        if row.fingerprint != fingerprint:
            code = "idempotency_key_reused"
            raise AppError(code, ERROR_CODES[code][1], status=ERROR_CODES[code][0], field=HEADER)
        if row.status is not None:
            raise Replay(row)
        if row.created_at > now - IN_FLIGHT_TAKEOVER:
            raise KeyInUse()
        # Claimed long ago and never answered: its process died. Take it over (one taker wins).
        if IdempotencyKey.objects.filter(pk=row.pk, status=None, created_at=row.created_at).update(created_at=now):
            row.created_at = now
            return row
    raise KeyInUse()


def idempotency_answer_store(
    *, claim: IdempotencyKey, response: HttpResponse, agent: Agent | None, end_user: EndUser | None, now: datetime
) -> None:
    """Keep the answer to a claimed key, for its repeats."""
    IdempotencyKey.objects.filter(pk=claim.pk, status=None).update(
        status=response.status_code,
        content_type=response.get("Content-Type", ""),
        headers={name: response[name] for name in KEPT_HEADERS if response.has_header(name)},
        body=bytes(response.content),
        answered_at=now,
        agent=agent,
        end_user=end_user,
    )


def idempotency_key_release(*, claim: IdempotencyKey) -> None:
    """Give a claimed key back unanswered (the request failed): a retry with it runs again."""
    IdempotencyKey.objects.filter(pk=claim.pk, status=None).delete()


def idempotency_keys_expire(*, now: datetime) -> int:
    """Delete every key older than WINDOW (answered or not); answers how many went."""
    return IdempotencyKey.objects.filter(created_at__lte=now - WINDOW).delete()[0]


def forget_answers(*, end_user_id: int) -> int:
    """Delete the kept answers about one end user (their memory was deleted or stopped)."""
    return IdempotencyKey.objects.filter(end_user_id=end_user_id).exclude(status=None).delete()[0]


# The changes that empty a memory or stop it (memory.store.events' kinds).
_FORGETTING_KINDS = frozenset({"deleted", "stopped", "expired"})


@receiver(memory_changed, dispatch_uid="surfaces.idempotency.memory_changed")
def memory_changed_forgets_answers(sender, event: MemoryChanged, **kwargs) -> None:
    """A memory deleted (by the team, the person or expiry) or stopped takes the kept answers about
    that person with it, in the change's own transaction, as it takes the memory."""
    if event.kind in _FORGETTING_KINDS:
        forget_answers(end_user_id=event.end_user_id)


def _usable(value: Any, max_length: int) -> str | None:
    """An id from a path or body that could name a row (PostgreSQL refuses NUL in text)."""
    return value if isinstance(value, str) and 0 < len(value) <= max_length and "\x00" not in value else None


def answer_subject(*, team: Team, kwargs: dict, body: Any) -> tuple[Agent | None, EndUser | None]:
    """The agent and end user a successful answer is about, from the path (and a start's endUserId),
    so that their deletion takes it along. None where the request named none (or they are gone)."""
    conversation_id = _usable(kwargs.get("conversation_id"), 40)
    if conversation_id is not None:
        conversation = (
            Conversation.objects.select_related("agent", "end_user")
            .filter(public_id=conversation_id, agent__team=team)
            .first()
        )
        return (conversation.agent, conversation.end_user) if conversation else (None, None)
    agent_id = _usable(kwargs.get("agent_id"), 40)
    agent = Agent.objects.filter(public_id=agent_id, team=team).first() if agent_id is not None else None
    if agent is None:
        return None, None
    external_id = kwargs.get("end_user_id")
    if external_id is None and isinstance(body, dict):
        external_id = body.get("endUserId")
    external_id = _usable(external_id, 200)
    if external_id is None:
        return agent, None
    return agent, EndUser.objects.filter(agent=agent, external_id=external_id).first()


# --- The mixin ------------------------------------------------------------------------------------


class IdempotentWrites:
    """For an APIView whose caller is a team: a write that carries an Idempotency-Key runs once.
    `idempotency_claim(request)` is called last in `initial()`, after authentication, the throttle
    and the view's own checks; the answer is kept in `finalize_response`, or the key released when
    the request failed."""

    _idempotency_claim: IdempotencyKey | None = None
    kwargs: dict[str, Any]  # the view's path arguments (APIView sets them)

    def idempotency_claim(self, request) -> None:
        if request.method not in WRITE_METHODS:
            return
        key = key_from_request(request)
        if key is None:
            return
        fingerprint = request_fingerprint(
            method=request.method, route=type(self).__name__, kwargs=self.kwargs, body=request.body
        )
        self._idempotency_claim = idempotency_key_claim(
            team=request.user.team, key=key, fingerprint=fingerprint, now=timezone.now()
        )

    def handle_exception(self, exc):
        if isinstance(exc, Replay):
            return exc.response()
        try:
            response = super().handle_exception(exc)
        except Exception:
            self._idempotency_release()
            raise
        if isinstance(exc, KeyInUse):
            response["Retry-After"] = "1"
        return response

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        claim, self._idempotency_claim = self._idempotency_claim, None
        if claim is None:
            return response
        if response.status_code >= 500 or response.status_code == 429:
            idempotency_key_release(claim=claim)
            return response
        if isinstance(response, Response) and not response.is_rendered:
            response.render()
        agent, end_user = None, None
        if response.status_code < 400:  # an error names nobody's data
            agent, end_user = answer_subject(team=request.user.team, kwargs=self.kwargs, body=request.data)
        idempotency_answer_store(claim=claim, response=response, agent=agent, end_user=end_user, now=timezone.now())
        return response

    def _idempotency_release(self) -> None:
        claim, self._idempotency_claim = self._idempotency_claim, None
        if claim is not None:
            idempotency_key_release(claim=claim)
