"""A team's webhook endpoints and the deliveries to them. Deliveries hold ids and counts only:
a memory's text is read at sending time, and only for an endpoint that opted in."""

import secrets

from django.db import models
from django.db.models import Q

from agents.models import Agent, Team

EVENTS = ("memory.updated", "memory.stopped", "memory.deleted", "end_user.erased")


def new_endpoint_public_id() -> str:
    return "whk_" + secrets.token_hex(6)


def new_delivery_public_id() -> str:
    return "dlv_" + secrets.token_hex(8)


def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(24)


class Endpoint(models.Model):
    public_id = models.CharField(max_length=20, unique=True, default=new_endpoint_public_id, editable=False)
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="webhook_endpoints")
    # Only this agent's events; null: every agent of the team.
    agent = models.ForeignKey(Agent, null=True, blank=True, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.CharField(max_length=500)
    events = models.JSONField(default=list)
    secret = models.CharField(max_length=64, default=new_secret)
    include_text = models.BooleanField(default=False)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_status = models.CharField(max_length=20, blank=True)  # the last delivery's: succeeded, retrying, failed
    last_delivery_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.public_id} ({self.url})"


class Delivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RETRYING = "retrying", "Retrying"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    public_id = models.CharField(max_length=24, unique=True, default=new_delivery_public_id, editable=False)
    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40)
    # ids and counts only: {"agentId", "endUserId", ...}; never a memory's words.
    data = models.JSONField()
    created_at = models.DateTimeField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    # The last attempt's answer, its status class only ("2xx" .. "5xx", "no_response"): never its
    # exact code, headers or body (webhooks.sending says why).
    last_response = models.CharField(max_length=12, blank=True)
    last_error = models.CharField(max_length=200, blank=True)  # fixed words from webhooks.sending

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["pending", "retrying", "succeeded", "failed"]), name="delivery_status_valid"
            ),
        ]
        indexes = [
            models.Index(
                fields=["next_attempt_at"], name="delivery_due", condition=Q(status__in=["pending", "retrying"])
            ),
            models.Index(fields=["endpoint", "-created_at"], name="delivery_endpoint_created"),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} {self.event} ({self.status})"
