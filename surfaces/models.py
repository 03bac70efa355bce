"""What the surfaces themselves keep: the API's idempotency keys (surfaces.http.idempotency).

The model lives here, not in `agents`, because it is a record of HTTP: a header a team sent and the
answer it got, status and body as rendered. No domain code reads it; the REST views write it through
one mixin on their base class."""

from django.db import models
from django.utils import timezone


class IdempotencyKey(models.Model):
    """One `Idempotency-Key` a team sent on a write, with what the request was (its fingerprint) and,
    once answered, the answer to replay. A row without a status is a request still being answered.

    `agent` and `end_user` name whose data the answer may hold, so that deleting the agent or erasing
    the person takes their answers with them (and a memory deleted or stopped drops them too:
    surfaces.http.idempotency.forget_answers)."""

    team = models.ForeignKey("agents.Team", on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of the method, the route and the body.")
    created_at = models.DateTimeField(default=timezone.now)
    status = models.PositiveSmallIntegerField(null=True, blank=True)
    content_type = models.CharField(max_length=100, blank=True)
    headers = models.JSONField(default=dict, blank=True)
    body = models.BinaryField(default=b"", blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    agent = models.ForeignKey("agents.Agent", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    end_user = models.ForeignKey("agents.EndUser", null=True, blank=True, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "key"], name="idempotency_key_unique_per_team"),
        ]
        indexes = [models.Index(fields=["created_at"], name="idempotency_key_created")]

    def __str__(self) -> str:
        return f"{self.key} ({self.status or 'in flight'})"
