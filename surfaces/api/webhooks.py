"""The REST API for webhook endpoints: list, register, read (with its recent deliveries), change
and remove. The secret that signs deliveries is answered once, when the endpoint is made (or its
secret rotated)."""

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from agents.errors import AppError
from surfaces.http.base import (
    NO_CONTENT,
    StrictBooleanField,
    StrictCharField,
    StrictSerializer,
    TeamApi,
    errors,
    parse_body,
    usable_id,
)
from webhooks import services
from webhooks.models import EVENTS, Endpoint
from webhooks.sending import RESPONSE_CLASSES

TAG_WEBHOOKS = ["Webhooks"]
RECENT_DELIVERIES = 20


class DeliveryOut(serializers.Serializer):
    id = serializers.CharField(source="public_id")
    event = serializers.CharField()
    status = serializers.ChoiceField(choices=["pending", "retrying", "succeeded", "failed"])
    attempts = serializers.IntegerField()
    createdAt = serializers.DateTimeField(source="created_at")
    lastAttemptAt = serializers.DateTimeField(source="last_attempt_at", allow_null=True)
    nextAttemptAt = serializers.DateTimeField(
        source="next_attempt_at", allow_null=True, help_text="When it is tried again (retrying)."
    )
    lastResponseClass = serializers.ChoiceField(
        source="last_response",
        choices=RESPONSE_CLASSES,
        allow_blank=True,
        help_text="The last attempt's answer, its status class only (`3xx`: a redirect, never followed; "
        "`no_response`: refused before connecting, no connection, a timeout or a certificate that did not "
        "verify); empty before the first attempt. Nothing else of the answer is kept.",
    )
    lastError = serializers.CharField(
        source="last_error", allow_blank=True, help_text="Why the last attempt failed, in fixed words."
    )


class EndpointOut(serializers.Serializer):
    id = serializers.CharField(source="public_id", help_text="e.g. whk_5f0c1a2b3c4d")
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENTS))
    agentId = serializers.CharField(
        source="agent.public_id",
        allow_null=True,
        default=None,
        help_text="Only this agent's events; null: every agent of the team.",
    )
    includeText = serializers.BooleanField(
        source="include_text", help_text="memory.updated carries the memory's text (off by default)."
    )
    active = serializers.BooleanField()
    createdAt = serializers.DateTimeField(source="created_at")
    lastStatus = serializers.CharField(
        source="last_status", allow_blank=True, help_text="The last delivery's status; empty before the first."
    )
    lastDeliveryAt = serializers.DateTimeField(source="last_delivery_at", allow_null=True)


class EndpointWithSecretOut(EndpointOut):
    secret = serializers.CharField(help_text="Signs every delivery (AgentNava-Signature); shown only now.")


class EndpointDetailOut(EndpointOut):
    deliveries = DeliveryOut(
        many=True, source="recent_deliveries", help_text=f"The last {RECENT_DELIVERIES}, newest first."
    )


class EndpointListOut(serializers.Serializer):
    webhooks = EndpointOut(many=True)


class WebhookListApi(TeamApi):
    role_required = {"POST": "webhooks"}

    class WebhookCreateIn(StrictSerializer):
        url = StrictCharField(
            max_length=500,
            help_text="An https address that answers 2xx. Its host must resolve, and only to globally routable "
            "addresses (no private, loopback, link-local, shared 100.64.0.0/10 or reserved ones, nor IPv6 forms "
            "of them); redirects are not followed.",
        )
        events = serializers.ListField(
            child=StrictCharField(max_length=40),
            min_length=1,
            max_length=len(EVENTS),
            help_text=f"Any of: {', '.join(EVENTS)}.",
        )
        agentId = StrictCharField(
            required=False, max_length=20, help_text="Only this agent's events (default: every agent of the team)."
        )
        includeText = StrictBooleanField(
            required=False, default=False, help_text="memory.updated carries the memory's text."
        )

    @extend_schema(
        operation_id="webhooks_list",
        tags=TAG_WEBHOOKS,
        summary="client.webhooks.list()",
        description="The team's webhook endpoints, newest first (at most 20).",
        responses={200: EndpointListOut, **errors()},
    )
    def get(self, request):
        endpoints = Endpoint.objects.filter(team=self.team()).select_related("agent")
        return Response(EndpointListOut({"webhooks": endpoints}).data)

    @extend_schema(
        operation_id="webhook_create",
        tags=TAG_WEBHOOKS,
        summary="client.webhooks.create({url, events, agentId?, includeText?})",
        description="Register an endpoint. Each event is POSTed as JSON `{id, type, createdAt, data}` with ids "
        "and counts (`data.agentId`, `data.endUserId`, ...), signed in `AgentNava-Signature: t=<unix>,v1=<hex>` "
        "(HMAC-SHA256 of `<t>.<body>` with the secret); a delivery that does not get a 2xx is retried with "
        "exponential backoff, six attempts in all. Owners and admins only (403 `admin_only`).",
        request=WebhookCreateIn,
        responses={201: EndpointWithSecretOut, **errors("invalid_webhook", "admin_only", "agent_not_found", body=True)},
        examples=[
            OpenApiExample(
                "create",
                value={"url": "https://example.com/agentnava/webhook", "events": ["memory.updated", "end_user.erased"]},
                request_only=True,
            ),
            OpenApiExample(
                "created",
                value={
                    "id": "whk_5f0c1a2b3c4d",
                    "url": "https://example.com/agentnava/webhook",
                    "events": ["memory.updated", "end_user.erased"],
                    "agentId": None,
                    "includeText": False,
                    "active": True,
                    "createdAt": "2026-12-01T09:00:00Z",
                    "lastStatus": "",
                    "lastDeliveryAt": None,
                    "secret": "whsec_8Yw3k0cQ2m9Vn1rT5xZp4bLs6dHf7gJa",
                },
                response_only=True,
                status_codes=["201"],
            ),
        ],
    )
    def post(self, request):
        data = parse_body(self.WebhookCreateIn, request)
        agent = self.agent(data["agentId"]) if "agentId" in data else None
        endpoint = services.endpoint_create(
            team=self.team(),
            url=data["url"],
            events=data["events"],
            include_text=data["includeText"],
            agent=agent,
            actor=self.actor(),
        )
        return Response(EndpointWithSecretOut(endpoint).data, status=status.HTTP_201_CREATED)


class WebhookApi(TeamApi):
    role_required = {"PATCH": "webhooks", "DELETE": "webhooks"}

    class WebhookUpdateIn(StrictSerializer):
        read_only_names = ("id", "agentId", "createdAt", "lastStatus", "lastDeliveryAt", "secret")
        url = StrictCharField(required=False, max_length=500)
        events = serializers.ListField(
            child=StrictCharField(max_length=40), required=False, min_length=1, max_length=len(EVENTS)
        )
        includeText = StrictBooleanField(required=False)
        active = StrictBooleanField(required=False, help_text="false: nothing is sent until it is true again.")
        rotateSecret = StrictBooleanField(required=False, help_text="true: a new secret, answered once in `secret`.")

    def endpoint(self, webhook_id: str) -> Endpoint:
        endpoint = None
        if usable_id(webhook_id, 20):
            endpoint = Endpoint.objects.select_related("agent").filter(public_id=webhook_id, team=self.team()).first()
        if endpoint is None:
            raise AppError("webhook_not_found", "No webhook endpoint with this id.", status=404)
        return endpoint

    @extend_schema(
        operation_id="webhook_get",
        tags=TAG_WEBHOOKS,
        summary="client.webhooks.get(id)",
        description="The endpoint and its recent deliveries with their last status.",
        responses={200: EndpointDetailOut, **errors("webhook_not_found")},
    )
    def get(self, request, webhook_id):
        endpoint = self.endpoint(webhook_id)
        endpoint.recent_deliveries = list(endpoint.deliveries.order_by("-created_at", "-id")[:RECENT_DELIVERIES])
        return Response(EndpointDetailOut(endpoint).data)

    @extend_schema(
        operation_id="webhook_update",
        tags=TAG_WEBHOOKS,
        summary="client.webhooks.update(id, {...})",
        description="Change, pause or resume the endpoint, or rotate its secret. Owners and admins only.",
        request=WebhookUpdateIn,
        responses={
            200: EndpointWithSecretOut,
            **errors("invalid_webhook", "admin_only", "webhook_not_found", body=True),
        },
    )
    def patch(self, request, webhook_id):
        endpoint = self.endpoint(webhook_id)
        data = parse_body(self.WebhookUpdateIn, request)
        names = {
            "url": "url",
            "events": "events",
            "includeText": "include_text",
            "active": "active",
            "rotateSecret": "rotate_secret",
        }
        endpoint = services.endpoint_update(
            endpoint=endpoint, changes={names[key]: value for key, value in data.items()}, actor=self.actor()
        )
        answer = EndpointWithSecretOut(endpoint).data
        if not data.get("rotateSecret"):
            answer.pop("secret")
        return Response(answer)

    @extend_schema(
        operation_id="webhook_delete",
        tags=TAG_WEBHOOKS,
        summary="client.webhooks.delete(id)",
        description="Removes the endpoint and its deliveries; nothing more is sent. Owners and admins only.",
        responses={204: NO_CONTENT, **errors("admin_only", "webhook_not_found")},
    )
    def delete(self, request, webhook_id):
        services.endpoint_delete(endpoint=self.endpoint(webhook_id), actor=self.actor())
        return Response(status=status.HTTP_204_NO_CONTENT)


__all__ = ["WebhookApi", "WebhookListApi"]
