"""Webhook endpoints and deliveries: register, emit an event, deliver with retries.

An event becomes one Delivery row per subscribed endpoint, in the transaction of the change that
caused it; after commit each is queued as a django-q task (`webhooks.tasks.deliver`). A failed
attempt (no 2xx, a timeout, a refused address) is retried with exponential backoff by the
minute sweep (`webhooks.tasks.retry_due`): BACKOFF_SECONDS * 2**(attempt - 1), up to
MAX_ATTEMPTS; then the delivery is `failed`. The endpoint keeps its last status. Where a delivery
may go, and what of the answer is kept, is `webhooks.addresses` and `webhooks.sending`."""

import json
import logging
import secrets
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents import access
from agents.errors import AppError
from agents.models import AuditEvent
from webhooks import addresses, sending, signing
from webhooks.models import EVENTS, Delivery, Endpoint

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 6
BACKOFF_SECONDS = 30  # 30 s, 1, 2, 4, 8 min between the six attempts
MAX_ENDPOINTS_PER_TEAM = 20
PAUSED = "The endpoint was paused: not sent."
CLAIM_SECONDS = 120  # a queued attempt is not queued again by the sweep within this time
KEEP_DAYS = 30  # finished deliveries (ids and counts) are kept this long, for the endpoint's history


# --- Endpoints ----------------------------------------------------------------------------


def _check_url(url: str) -> str:
    """The url, when it may be registered (webhooks.addresses: https, and every address its host
    resolves to globally routable, unless the development settings allow http or private targets)."""
    try:
        return addresses.check_registration(
            url, allow_http=settings.WEBHOOKS_ALLOW_HTTP, allow_private=settings.WEBHOOKS_ALLOW_PRIVATE
        )
    except addresses.TargetRefused as refused:
        raise AppError("invalid_webhook", refused.reason, field="url") from None


def _check_events(events) -> list[str]:
    if not events or any(event not in EVENTS for event in events):
        raise AppError("invalid_webhook", f"events: one or more of {', '.join(EVENTS)}.", field="events")
    return [event for event in EVENTS if event in events]


def _audit(endpoint: Endpoint, actor, action: str, detail=None) -> None:
    """Endpoint changes go in the team's audit log (the address's host only, never a secret)."""
    if actor is not None:
        target = f"webhook {endpoint.public_id} ({urlsplit(endpoint.url).hostname})"
        access.audit_record(team=endpoint.team, actor=actor, action=action, target=target, detail=detail)


def endpoint_create(
    *, team, url: str, events: list[str], include_text: bool = False, agent=None, actor=None
) -> Endpoint:
    """Register an endpoint; recorded in the audit log when an `actor` (`agents.access.Actor`) asked."""
    if Endpoint.objects.filter(team=team).count() >= MAX_ENDPOINTS_PER_TEAM:
        raise AppError("invalid_webhook", f"A team has at most {MAX_ENDPOINTS_PER_TEAM} endpoints.")
    with transaction.atomic():
        endpoint = Endpoint.objects.create(
            team=team, agent=agent, url=_check_url(url), events=_check_events(events), include_text=include_text
        )
        _audit(endpoint, actor, AuditEvent.Action.WEBHOOK_CREATED, {"events": endpoint.events})
    return endpoint


def endpoint_update(*, endpoint: Endpoint, changes: dict, actor=None) -> Endpoint:
    if "url" in changes:
        endpoint.url = _check_url(changes["url"])
    if "events" in changes:
        endpoint.events = _check_events(changes["events"])
    if "include_text" in changes:
        endpoint.include_text = changes["include_text"]
    if "active" in changes:
        endpoint.active = changes["active"]
    if changes.get("rotate_secret"):
        endpoint.secret = "whsec_" + secrets.token_urlsafe(24)
    with transaction.atomic():
        endpoint.save()
        _audit(endpoint, actor, AuditEvent.Action.WEBHOOK_UPDATED, {"changed": sorted(changes)})
    return endpoint


def endpoint_delete(*, endpoint: Endpoint, actor=None) -> None:
    with transaction.atomic():
        _audit(endpoint, actor, AuditEvent.Action.WEBHOOK_DELETED)
        endpoint.delete()


# --- Events -------------------------------------------------------------------------------


def subscribed(*, agent_id: int, event: str) -> list[Endpoint]:
    """The active endpoints of the agent's team that take `event` from this agent (the event list
    is filtered here, as SQLite has no JSON containment)."""
    return [
        endpoint
        for endpoint in _team_endpoints(agent_id)
        if event in endpoint.events and endpoint.agent_id in (None, agent_id)
    ]


def _team_endpoints(agent_id: int) -> list[Endpoint]:
    """The active endpoints of the agent's team: one query, read once per outermost transaction
    and agent (a batch of quiet-window runs changes many memories of one agent in one
    transaction). Any change of an endpoint in this process drops what was read
    (`forget_endpoints`); one made by another process during the transaction is seen by the next
    one, as if it had been made a moment later."""
    connection = transaction.get_connection()
    query = Endpoint.objects.filter(team__agents=agent_id, active=True)
    if not connection.in_atomic_block:
        return list(query)
    outermost = connection.atomic_blocks[0]
    memo: tuple[object, dict[int, list[Endpoint]]] | None = getattr(connection, "_webhook_endpoints", None)
    if memo is None or memo[0] is not outermost:
        memo = (outermost, {})
        connection._webhook_endpoints = memo
    if agent_id not in memo[1]:
        memo[1][agent_id] = list(query)
    return memo[1][agent_id]


def forget_endpoints(**kwargs) -> None:
    """Drop the endpoints `_team_endpoints` read in this transaction (an endpoint changed)."""
    connection = transaction.get_connection()
    if hasattr(connection, "_webhook_endpoints"):
        del connection._webhook_endpoints


def emit(*, agent_id: int, event: str, data, now: datetime | None = None) -> list[Delivery]:
    """One delivery per endpoint subscribed to `event` from this agent, queued when the surrounding
    transaction commits. `data` (ids and counts) may be a callable, called only when some endpoint
    listens, so a team without webhooks pays one query per memory change."""
    endpoints = subscribed(agent_id=agent_id, event=event)
    if not endpoints:
        return []
    data = data() if callable(data) else data
    now = now or timezone.now()
    deliveries = [
        Delivery.objects.create(
            endpoint=endpoint,
            event=event,
            data=data,
            created_at=now,
            next_attempt_at=now + timedelta(seconds=CLAIM_SECONDS),
        )
        for endpoint in endpoints
    ]
    ids = [delivery.pk for delivery in deliveries]
    transaction.on_commit(lambda: _queue(ids))
    return deliveries


def _queue(delivery_ids: list[int]) -> None:
    from django_q.tasks import async_task

    for delivery_id in delivery_ids:
        async_task("webhooks.tasks.deliver", delivery_id, task_name=f"webhook-{delivery_id}")


# --- Delivering ---------------------------------------------------------------------------


def delivery_body(delivery: Delivery) -> bytes:
    """The JSON a receiver gets. With `includeText`, a memory.updated delivery carries the memory's
    text as it is when sent (nothing of it is stored with the delivery)."""
    data = dict(delivery.data)
    if delivery.endpoint.include_text and delivery.event == "memory.updated":
        from memory.models import Memory

        memory = Memory.objects.filter(
            end_user__agent__public_id=data.get("agentId"), end_user__external_id=data.get("endUserId")
        ).first()
        data["text"] = memory.text if memory else None
    payload = {
        "id": delivery.public_id,
        "type": delivery.event,
        "createdAt": delivery.created_at.isoformat(),
        "data": data,
    }
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def backoff(attempt: int) -> timedelta:
    """The wait after failed attempt number `attempt` (1-based)."""
    return timedelta(seconds=BACKOFF_SECONDS * 2 ** (attempt - 1))


def deliver(delivery_id: int, *, now: datetime | None = None) -> str | None:
    """One attempt at one delivery; answers its status after (None when it was not due: sent,
    given up, or its endpoint removed). An endpoint paused by the time the attempt runs sends
    nothing: the delivery is failed without a request, queued retries included. Only the
    answer's status class is kept (`webhooks.sending`)."""
    with transaction.atomic():
        delivery = (
            Delivery.objects.select_for_update(skip_locked=True)
            .select_related("endpoint")
            .filter(pk=delivery_id, status__in=[Delivery.Status.PENDING, Delivery.Status.RETRYING])
            .first()
        )
        if delivery is None:
            return None
        endpoint = delivery.endpoint
        now = now or timezone.now()
        if not endpoint.active:
            delivery.status, delivery.last_error, delivery.next_attempt_at = Delivery.Status.FAILED, PAUSED, None
            delivery.save(update_fields=["status", "last_error", "next_attempt_at"])
            return delivery.status
        outcome = _send(delivery)
        delivery.attempts += 1
        delivery.last_attempt_at = now
        delivery.last_response = outcome.response_class
        delivery.last_error = outcome.error
        if outcome.succeeded:
            delivery.status, delivery.next_attempt_at = Delivery.Status.SUCCEEDED, None
        elif delivery.attempts >= MAX_ATTEMPTS:
            delivery.status, delivery.next_attempt_at = Delivery.Status.FAILED, None
        else:
            delivery.status, delivery.next_attempt_at = Delivery.Status.RETRYING, now + backoff(delivery.attempts)
        delivery.save()
        Endpoint.objects.filter(pk=endpoint.pk).update(last_status=delivery.status, last_delivery_at=now)
    log.info(
        "webhook_delivery",
        extra={"event": "webhook_delivery", "outcome": delivery.status, "attempt": delivery.attempts},
    )
    return delivery.status


def _send(delivery: Delivery) -> sending.Outcome:
    endpoint = delivery.endpoint
    body = delivery_body(delivery)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "AgentNava-Webhooks/1",
        signing.HEADER: signing.sign(endpoint.secret, body),
        "AgentNava-Event": delivery.event,
        "AgentNava-Delivery": delivery.public_id,
    }
    return sending.post(
        endpoint.url,
        body,
        headers,
        allow_http=settings.WEBHOOKS_ALLOW_HTTP,
        allow_private=settings.WEBHOOKS_ALLOW_PRIVATE,
    )


def deliveries_due(*, now: datetime | None = None, limit: int = 500) -> list[int]:
    """Deliveries whose next attempt is due (a retry after its backoff, or a first attempt whose
    task was lost), claimed for CLAIM_SECONDS so the next sweep does not queue them again."""
    now = now or timezone.now()
    with transaction.atomic():
        due = list(
            Delivery.objects.select_for_update(skip_locked=True)
            .filter(status__in=[Delivery.Status.PENDING, Delivery.Status.RETRYING], next_attempt_at__lte=now)
            .order_by("next_attempt_at")
            .values_list("pk", flat=True)[:limit]
        )
        Delivery.objects.filter(pk__in=due).update(next_attempt_at=now + timedelta(seconds=CLAIM_SECONDS))
    return due


def retry_due(*, now: datetime | None = None) -> int:
    due = deliveries_due(now=now)
    _queue(due)
    prune(now=now)
    return len(due)


def prune(*, now: datetime | None = None) -> int:
    """Finished deliveries older than KEEP_DAYS go (they name end users by id)."""
    cutoff = (now or timezone.now()) - timedelta(days=KEEP_DAYS)
    done = [Delivery.Status.SUCCEEDED, Delivery.Status.FAILED]
    return Delivery.objects.filter(status__in=done, created_at__lt=cutoff).delete()[0]


def forget_end_user(*, agent, external_id: str) -> int:
    """An erased end user's id leaves the finished deliveries' history (the erase's own event,
    and any still to be sent, keep it until they are sent and pruned)."""
    done = [Delivery.Status.SUCCEEDED, Delivery.Status.FAILED]
    return Delivery.objects.filter(
        endpoint__team_id=agent.team_id, status__in=done, data__agentId=agent.public_id, data__endUserId=external_id
    ).delete()[0]
