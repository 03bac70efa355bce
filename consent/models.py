"""Consent per (agent, end user): the yes (agreed_at) or no of R26, and where it came from."""

from django.db import models
from django.db.models import Q

from agents.models import Agent, EndUser


class Consent(models.Model):
    class Source(models.TextChoices):
        CHAT_PROMPT = "chat_prompt", "Our chat's yes/no question"
        SITE_STEP = "site_step", "The site's own step (memory.set('on'))"
        API = "api", "The API"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="consents")
    end_user = models.OneToOneField(EndUser, on_delete=models.CASCADE, related_name="consent")
    # When they first said yes; cleared when they say no.
    agreed_at = models.DateTimeField(null=True, blank=True)
    declined_at = models.DateTimeField(null=True, blank=True)
    source = models.CharField(max_length=20, choices=Source.choices)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(agreed_at__isnull=True) | Q(declined_at__isnull=True),
                name="consent_yes_or_no",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.end_user}: {'yes' if self.agreed_at else 'no'}"
