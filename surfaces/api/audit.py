"""The team's audit log over the API: a read-only list, newest first, keyset pages like every list.
Owners' and admins' keys only (`agents.roles`, "audit_log")."""

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from agents import access
from agents.models import AuditEvent
from surfaces.http.base import TeamApi, errors
from surfaces.http.pagination import PageNext, PageQueryIn, keyset_page

TAG_TEAM = ["Team"]


class AuditEventOut(serializers.Serializer):
    id = serializers.CharField(source="public_id", help_text="e.g. aud_1a2b3c4d5e6f7a8b")
    action = serializers.ChoiceField(choices=AuditEvent.Action.values)
    actor = serializers.CharField(source="actor_label", help_text="Who: their e-mail then, or `command line`.")
    apiKeyPrefix = serializers.CharField(
        source="api_key.prefix", allow_null=True, default=None, help_text="The key they used; null: the web app."
    )
    target = serializers.CharField(help_text="What it was done to: a key's prefix, a member's e-mail, an endpoint.")
    detail = serializers.DictField(help_text="Roles before and after, counts; never a memory's words.")
    createdAt = serializers.DateTimeField(source="created_at")


class AuditPageOut(serializers.Serializer):
    events = AuditEventOut(many=True)
    next = PageNext(allow_null=True, help_text="The query of the next page (before, or cursor); null on the last.")


class AuditLogApi(TeamApi):
    QueryIn = PageQueryIn
    role_required = {"GET": "audit_log"}

    @extend_schema(
        operation_id="audit_log_list",
        tags=TAG_TEAM,
        summary="client.auditLog({limit, before})",
        description="Who did what to the team's access and team-wide data, and when: API keys created and "
        "revoked, webhook endpoints added, changed and removed, members invited, joined, removed and their "
        "roles changed, agents deleted, people erased on every agent. Newest first; page with `before` or "
        "`cursor`. Read-only. Owners' and admins' keys only (403 `admin_only`).",
        parameters=[PageQueryIn],
        responses={200: AuditPageOut, **errors("admin_only")},
        examples=[
            OpenApiExample(
                "events",
                value={
                    "events": [
                        {
                            "id": "aud_1a2b3c4d5e6f7a8b",
                            "action": "member.removed",
                            "actor": "owner@acme.example",
                            "apiKeyPrefix": None,
                            "target": "bob@acme.example",
                            "detail": {"keysRevoked": 1, "sessionsEnded": 2},
                            "createdAt": "2026-12-01T09:00:00Z",
                        }
                    ],
                    "next": None,
                },
                response_only=True,
            )
        ],
    )
    def get(self, request):
        query = PageQueryIn.from_request(request)
        events, next_query = keyset_page(access.audit_events(self.team()), field="created_at", query=query)
        return Response(AuditPageOut({"events": events, "next": next_query}).data)


__all__ = ["AuditLogApi"]
