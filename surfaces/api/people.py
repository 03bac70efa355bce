"""The REST API for the people an agent has met: the list (with or without a memory), their
conversations, an access request's export (everything kept about one person on one agent), and
the team-wide erase (one endUserId on every agent of the team). Thin classes over the services;
the R21 fields are `surfaces.api.memory`'s."""

from datetime import datetime
from typing import TYPE_CHECKING, TypedDict

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce, Substr
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from agents import access
from agents.end_user_ids import MAX_END_USER_ID_CHARS, end_user_id_part_refusal
from agents.errors import AppError
from agents.models import Agent, AuditEvent, Conversation, EndUser, Message
from consent.models import Consent
from consent.selectors import consent_of
from memory.models import MemoryRun
from memory.store import services
from memory.store.selectors import memories_of, memories_present
from surfaces.api.agents import ConversationOut
from surfaces.api.lists import ConversationDetailOut, with_transcript
from surfaces.api.memory import LastRunOut
from surfaces.http.base import TeamApi, end_user_id_for_lookup, end_user_lookup, errors
from surfaces.http.pagination import PageNext, PageQueryIn, keyset_page

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

TAG_PEOPLE = ["End users"]

END_USER_PATH = OpenApiParameter(
    "end_user_id",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="Your endUserId for this person, percent-encoded as one path segment "
    "(`encodeURIComponent(id)`: `bob/memory` is `bob%2Fmemory`, another person than `bob`). It must be in its "
    "normal form: Unicode NFC, no whitespace at the ends, no control characters.",
)


def end_user_not_found() -> AppError:
    return AppError("end_user_not_found", "No end user with this endUserId on this agent.", status=404)


def known_end_user(agent: Agent, end_user_id: str) -> EndUser:
    end_user = end_user_lookup(agent, end_user_id)
    if end_user is None:
        raise end_user_not_found()
    return end_user


# --- One read per person: the R21 fields, with or without a memory ----------------------------


class PersonFields(TypedDict):
    agreed_at: datetime | None
    conversation_count: int


def with_person_fields(end_users: "QuerySet[EndUser]") -> "QuerySet[WithAnnotations[EndUser, PersonFields]]":
    """End users with the consent's yes and how many of their conversations hold a message, in the
    same query (correlated subqueries on indexed columns, as `surfaces.api.memory.with_read_fields`)."""
    agreed = Consent.objects.filter(end_user=OuterRef("pk"), agreed_at__isnull=False).values("agreed_at")[:1]
    counted = (
        Conversation.objects.filter(
            Exists(Message.objects.filter(conversation=OuterRef("pk"))), end_user=OuterRef("pk")
        )
        .order_by()
        .values("end_user_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    return end_users.annotate(agreed_at=Subquery(agreed), conversation_count=Coalesce(Subquery(counted), 0))


def person_reads(agent: Agent, end_users: "list[WithAnnotations[EndUser, PersonFields]]") -> list[dict]:
    """The R21 fields of end users fetched through `with_person_fields` (two more queries for a
    whole page): an empty memory reads as empty text, with the fields that still apply."""
    ids = [end_user.pk for end_user in end_users]
    memories = memories_of(end_users)
    present = set(memories_present(agent).filter(end_user_id__in=ids).values_list("end_user_id", flat=True))
    reads = []
    for end_user in end_users:
        memory = memories.get(end_user.pk)
        reads.append(
            {
                "endUserId": end_user.external_id,
                "firstSeenAt": end_user.created_at,
                "hasMemory": end_user.pk in present,
                "text": memory.text if memory else "",
                "stopped": bool(memory and memory.stopped_at),
                "updatedAt": memory.updated_at if memory and end_user.pk in present else None,
                "readUpTo": memory.read_up_to if memory else None,
                "lastRun": memory.last_run if memory else None,
                "stoppedAt": memory.stopped_at if memory else None,
                "agreedAt": end_user.agreed_at,
                "lastChatAt": end_user.last_chat_at,
                "conversations": end_user.conversation_count,
            }
        )
    return reads


class PersonOut(serializers.Serializer):
    endUserId = serializers.CharField()
    firstSeenAt = serializers.DateTimeField(help_text="When the agent first met them (a chat, a memory or a consent).")
    hasMemory = serializers.BooleanField(
        help_text="Whether agent.memories() lists them: their memory has lines or records a stop."
    )
    text = serializers.CharField(
        allow_blank=True, help_text="Their memory, one fact per line; empty when there is none."
    )
    stopped = serializers.BooleanField()
    updatedAt = serializers.DateTimeField(
        allow_null=True, help_text="When their memory last changed; null without one."
    )
    readUpTo = serializers.DateTimeField(allow_null=True)
    lastRun = LastRunOut(allow_null=True)
    stoppedAt = serializers.DateTimeField(allow_null=True)
    agreedAt = serializers.DateTimeField(allow_null=True)
    lastChatAt = serializers.DateTimeField(allow_null=True)
    conversations = serializers.IntegerField(help_text="How many of their chats on this agent hold a message.")


# --- The list -------------------------------------------------------------------------------


class PeopleApi(TeamApi):
    class QueryIn(PageQueryIn):
        q = serializers.CharField(
            required=False,
            max_length=MAX_END_USER_ID_CHARS,
            trim_whitespace=False,
            help_text="Only endUserIds that start with this.",
        )

    class EndUserPageOut(serializers.Serializer):
        endUsers = PersonOut(many=True)
        next = PageNext(
            allow_null=True, help_text="The query of the next page (before=firstSeenAt, or cursor); null on the last."
        )

    @extend_schema(
        operation_id="agent_end_users",
        tags=TAG_PEOPLE,
        summary="agent.endUsers({limit, before, q})",
        description="Everyone this agent has met, with or without a memory, newest first (by `firstSeenAt`), "
        "with the R21 fields. `q` keeps the endUserIds that start with it.",
        parameters=[QueryIn],
        responses={200: EndUserPageOut, **errors("end_user_id_not_normal", "agent_not_found")},
        examples=[
            OpenApiExample(
                "people",
                value={
                    "endUsers": [
                        {
                            "endUserId": "u_ananya",
                            "firstSeenAt": "2026-11-02T08:10:00Z",
                            "hasMemory": True,
                            "text": "Prefers email over phone.\nWorks from the Pune office.",
                            "stopped": False,
                            "updatedAt": "2026-11-30T10:20:00Z",
                            "readUpTo": "2026-11-30T10:02:10Z",
                            "lastRun": {"at": "2026-11-30T10:20:00Z", "added": 1, "replaced": 0, "removed": 0},
                            "stoppedAt": None,
                            "agreedAt": None,
                            "lastChatAt": "2026-11-30T10:02:10Z",
                            "conversations": 4,
                        },
                        {
                            "endUserId": "u_bilal",
                            "firstSeenAt": "2026-11-01T12:00:00Z",
                            "hasMemory": False,
                            "text": "",
                            "stopped": False,
                            "updatedAt": None,
                            "readUpTo": None,
                            "lastRun": None,
                            "stoppedAt": None,
                            "agreedAt": None,
                            "lastChatAt": "2026-11-01T12:05:00Z",
                            "conversations": 1,
                        },
                    ],
                    "next": None,
                },
                response_only=True,
            )
        ],
    )
    def get(self, request, agent_id):
        agent = self.agent(agent_id)
        query = self.QueryIn.from_request(request)
        people = EndUser.objects.filter(agent=agent)
        if query.get("q"):
            if "\x00" in query["q"]:
                raise serializers.ValidationError({"q": ["Null characters are not allowed."]})
            refusal = end_user_id_part_refusal(query["q"])
            if refusal is not None:
                raise AppError(*refusal, field="q")
            # Exact and case-sensitive on every database (SQLite's LIKE ignores case).
            people = people.annotate(id_prefix=Substr("external_id", 1, len(query["q"]))).filter(id_prefix=query["q"])
        page, next_page = keyset_page(with_person_fields(people), field="created_at", query=query)
        return Response(self.EndUserPageOut({"endUsers": person_reads(agent, page), "next": next_page}).data)


# --- Their conversations ----------------------------------------------------------------------


class ConversationSummaryOut(ConversationOut):
    lastActivityAt = serializers.DateTimeField(source="last_activity_at")


class PersonConversationsApi(TeamApi):
    class QueryIn(PageQueryIn):
        pass

    class ConversationPageOut(serializers.Serializer):
        conversations = ConversationSummaryOut(many=True)
        next = PageNext(
            allow_null=True, help_text="The query of the next page (before=startedAt, or cursor); null on the last."
        )

    @extend_schema(
        operation_id="end_user_conversations",
        tags=TAG_PEOPLE,
        summary="endUser.conversations({limit, before})",
        description="Their conversations on this agent, newest first (by `startedAt`); read one with "
        "`GET /conversations/{id}`.",
        parameters=[END_USER_PATH, QueryIn],
        responses={
            200: ConversationPageOut,
            **errors("end_user_id_not_normal", "agent_not_found", "end_user_not_found"),
        },
    )
    def get(self, request, agent_id, end_user_id):
        end_user = known_end_user(self.agent(agent_id), end_user_id)
        query = self.QueryIn.from_request(request)
        rows = Conversation.objects.filter(end_user=end_user).select_related("agent", "version", "end_user")
        page, next_page = keyset_page(rows, field="started_at", query=query)
        return Response(self.ConversationPageOut({"conversations": page, "next": next_page}).data)


# --- The export (an access request) -----------------------------------------------------------


class RunOut(serializers.Serializer):
    kind = serializers.ChoiceField(choices=MemoryRun.Kind.values)
    status = serializers.CharField()
    at = serializers.DateTimeField(source="started_at")
    added = serializers.IntegerField()
    replaced = serializers.IntegerField()
    removed = serializers.IntegerField()
    messagesRead = serializers.IntegerField(source="messages_read")
    actionsRead = serializers.IntegerField(source="actions_read")


class ExportConsentOut(serializers.Serializer):
    agreedAt = serializers.DateTimeField(source="agreed_at", allow_null=True)
    declinedAt = serializers.DateTimeField(source="declined_at", allow_null=True)
    source = serializers.CharField()  # type: ignore[assignment]  # a declared field, not Field.source: DRF's metaclass takes it off the class
    updatedAt = serializers.DateTimeField(source="updated_at")


class ExportAgentOut(serializers.Serializer):
    id = serializers.CharField(source="public_id")
    name = serializers.CharField()


class ExportOut(serializers.Serializer):
    exportedAt = serializers.DateTimeField()
    agent = ExportAgentOut()
    endUser = PersonOut(help_text="Their memory with the R21 fields.")
    memoryRuns = RunOut(many=True, help_text="Every change of their memory, newest first: counts only, never words.")
    consent = ExportConsentOut(allow_null=True, help_text="Their yes or no (R26); null when never asked.")
    conversations = ConversationDetailOut(
        many=True, help_text="Every conversation on this agent with its messages, actions and events, newest first."
    )


def end_user_export(agent: Agent, end_user: EndUser) -> dict:
    """Everything kept about one person on one agent, as one document."""
    person = with_person_fields(EndUser.objects.filter(pk=end_user.pk)).get()
    conversations = (
        Conversation.objects.filter(end_user=end_user)
        .select_related("agent", "version", "end_user")
        .prefetch_related("messages", "action_runs")
        .order_by("-started_at", "-id")
    )
    return ExportOut(
        {
            "exportedAt": timezone.now(),
            "agent": agent,
            "endUser": person_reads(agent, [person])[0],
            "memoryRuns": MemoryRun.objects.filter(memory__end_user=end_user).order_by("-started_at", "-id"),
            "consent": consent_of(end_user),
            "conversations": [with_transcript(conversation) for conversation in conversations],
        }
    ).data


class PersonExportApi(TeamApi):
    @extend_schema(
        operation_id="end_user_export",
        tags=TAG_PEOPLE,
        summary="endUser.export()",
        description="An access request's answer: everything kept about this person on this agent in one "
        "JSON document: their memory with the R21 fields, every change's counts, their consent, and every "
        "conversation with its messages, actions and events.",
        parameters=[END_USER_PATH],
        responses={200: ExportOut, **errors("end_user_id_not_normal", "agent_not_found", "end_user_not_found")},
        examples=[
            OpenApiExample(
                "export",
                value={
                    "exportedAt": "2026-12-01T09:00:00Z",
                    "agent": {"id": "agt_493fb4f0cf13", "name": "Support"},
                    "endUser": {
                        "endUserId": "u_ananya",
                        "firstSeenAt": "2026-11-02T08:10:00Z",
                        "hasMemory": True,
                        "text": "Prefers email over phone.",
                        "stopped": False,
                        "updatedAt": "2026-11-30T10:20:00Z",
                        "readUpTo": "2026-11-30T10:02:10Z",
                        "lastRun": None,
                        "stoppedAt": None,
                        "agreedAt": None,
                        "lastChatAt": "2026-11-30T10:02:10Z",
                        "conversations": 1,
                    },
                    "memoryRuns": [
                        {
                            "kind": "quiet",
                            "status": "succeeded",
                            "at": "2026-11-30T10:20:00Z",
                            "added": 1,
                            "replaced": 0,
                            "removed": 0,
                            "messagesRead": 2,
                            "actionsRead": 0,
                        }
                    ],
                    "consent": None,
                    "conversations": [
                        {
                            "id": "conv_5f0c1a2b3c4d5e6f",
                            "agentId": "agt_493fb4f0cf13",
                            "endUserId": "u_ananya",
                            "usesMemory": True,
                            "memoryOffReason": None,
                            "version": 3,
                            "project": None,
                            "startedAt": "2026-11-30T10:00:00Z",
                            "lastActivityAt": "2026-11-30T10:02:10Z",
                            "messages": [
                                {"role": "user", "text": "Email me, not a call.", "at": "2026-11-30T10:00:05Z"}
                            ],
                            "actions": [],
                            "events": [],
                        }
                    ],
                },
                response_only=True,
            )
        ],
    )
    def get(self, request, agent_id, end_user_id):
        agent = self.agent(agent_id)
        return Response(end_user_export(agent, known_end_user(agent, end_user_id)))


# --- The team-wide erase ----------------------------------------------------------------------


class ErasedOnAgentOut(serializers.Serializer):
    agentId = serializers.CharField()
    name = serializers.CharField()
    removed = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="What was removed on this agent, per kind: memories, memoryRuns, conversations, messages, actions, consents, endUsers, lines.",
    )


class TeamEraseOut(serializers.Serializer):
    endUserId = serializers.CharField()
    agents = ErasedOnAgentOut(many=True)


def team_erase(team, end_user_id: str) -> list[dict]:
    """Erase one endUserId on every agent of the team, all or nothing (`services.end_user_erase`
    on each); answers what went, per agent. None when no agent of the team knows them."""
    external_id = end_user_id_for_lookup(end_user_id)
    if external_id is None:
        return []
    erased = []
    with transaction.atomic():
        people = (
            EndUser.objects.select_related("agent")
            .filter(agent__team=team, external_id=external_id)
            .order_by("agent_id")
        )
        for end_user in people.select_for_update(of=("self",)):
            agent = end_user.agent
            removed = services.end_user_erase(end_user=end_user)
            erased.append({"agentId": agent.public_id, "name": agent.name, "removed": removed})
    return erased


class TeamEraseApi(TeamApi):
    role_required = {"DELETE": "team_erase"}

    @extend_schema(
        operation_id="team_end_user_erase",
        tags=TAG_PEOPLE,
        summary="client.endUser(id).erase()",
        description="Erase this endUserId on every agent of the team in one call, as `endUser.erase()` does "
        "on one: memory, conversations, messages, actions, consent. All agents or none. Answers what was "
        "removed per agent; 404 `end_user_not_found` when no agent of the team knows them. Owners and admins "
        "only (403 `admin_only`); recorded in the team's audit log with the number of agents, not the id.",
        parameters=[END_USER_PATH],
        responses={200: TeamEraseOut, **errors("admin_only", "end_user_id_not_normal", "end_user_not_found")},
        examples=[
            OpenApiExample(
                "erased",
                value={
                    "endUserId": "u_ananya",
                    "agents": [
                        {
                            "agentId": "agt_493fb4f0cf13",
                            "name": "Support",
                            "removed": {
                                "memories": 1,
                                "memoryRuns": 3,
                                "conversations": 2,
                                "messages": 9,
                                "actions": 1,
                                "consents": 1,
                                "endUsers": 1,
                                "lines": 2,
                            },
                        }
                    ],
                },
                response_only=True,
            )
        ],
    )
    def delete(self, request, end_user_id):
        erased = team_erase(self.team(), end_user_id)
        if not erased:
            raise AppError("end_user_not_found", "No agent of this team knows this endUserId.", status=404)
        access.audit_record(
            team=self.team(),
            actor=self.actor(),
            action=AuditEvent.Action.END_USER_ERASED,
            detail={"agents": len(erased)},
        )
        return Response(TeamEraseOut({"endUserId": end_user_id, "agents": erased}).data)


__all__ = ["PeopleApi", "PersonConversationsApi", "PersonExportApi", "TeamEraseApi", "end_user_export", "team_erase"]
