"""The REST API's reads an integrator starts from: the team's agents (list, create) and one
conversation with everything in it (R20: the team can read its chats). Thin classes, as in
`surfaces/api/agents.py`; the rules are the services'."""

from django.db.models import OuterRef, Subquery
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from agents import services
from agents.models import Agent, AgentVersion, Conversation, Message
from surfaces.api.agents import TAG_AGENTS, TAG_CONVERSATIONS, AgentApi, AgentOut, ConversationOut, agent_answer
from surfaces.http.base import StrictCharField, TeamApi, errors, parse_body
from surfaces.http.pagination import PageNext, PageQueryIn, keyset_page

EVENT_KINDS = (Message.Kind.TOOL_RESULT, Message.Kind.FILE, Message.Kind.WEB_PAGE)


class AgentListOut(AgentOut):
    createdAt = serializers.DateTimeField()


class AgentPageOut(serializers.Serializer):
    agents = AgentListOut(many=True)
    next = PageNext(
        allow_null=True, help_text="The query of the next page (before=createdAt, or cursor); null on the last."
    )


def with_published(agents):
    """Each agent with its published version, in the same query as the page."""
    newest = AgentVersion.objects.newest_of(OuterRef("pk")).values("pk")
    return agents.select_related("team").annotate(published_id=Subquery(newest))


class AgentListApi(TeamApi):
    QueryIn = PageQueryIn

    class CreateIn(AgentApi.UpdateIn):
        read_only_names = ("id", "version", "publishedAt", "createdAt")
        name = StrictCharField(max_length=120, help_text="What the team calls it, e.g. Support.")

    @extend_schema(
        operation_id="agents_list",
        tags=TAG_AGENTS,
        summary="client.agents({limit, before})",
        description="The team's agents, newest first, each as `agent.get()` answers it plus `createdAt`. "
        "Page with `before` = `next.before`, or exactly with `cursor` = `next.cursor`.",
        parameters=[PageQueryIn],
        responses={200: AgentPageOut, **errors("invalid_request")},
        examples=[
            OpenApiExample(
                "agents",
                value={
                    "agents": [
                        {
                            "id": "agt_493fb4f0cf13",
                            "name": "Support",
                            "version": 3,
                            "publishedAt": "2026-11-30T09:12:00Z",
                            "instructions": "Help customers of Acme with their plans.",
                            "guardrails": "",
                            "actions": [{"name": "renew_plan", "label": "Renewed the plan"}],
                            "memorySettings": {
                                "on": True,
                                "instructions": "",
                                "keepForDays": 90,
                                "quietMinutes": 15,
                                "showSwitch": False,
                                "askFirst": False,
                                "privacyUrl": "",
                                "notice": "Support is an AI assistant that remembers...",
                            },
                            "createdAt": "2026-11-02T08:00:00Z",
                        }
                    ],
                    "next": {"before": "2026-11-02T08:00:00Z", "cursor": "MjAyNi0xMS0wMlQwODowMDowMCswMDowMHw0Mg"},
                },
                response_only=True,
            )
        ],
    )
    def get(self, request):
        query = PageQueryIn.from_request(request)
        page, next_page = keyset_page(
            with_published(Agent.objects.filter(team=self.team())), field="created_at", query=query
        )
        versions = AgentVersion.objects.in_bulk([agent.published_id for agent in page])
        rows = [{**agent_answer(agent, versions[agent.published_id]), "createdAt": agent.created_at} for agent in page]
        return Response(AgentPageOut({"agents": rows, "next": next_page}).data)

    @extend_schema(
        operation_id="agent_create",
        tags=TAG_AGENTS,
        summary="client.createAgent({name, ...})",
        description="A new agent with its configuration published as version 1: the defaults, changed by "
        "what is given (`memorySettings` merges field by field). Memory is off unless turned on, and can "
        "only be turned on for a plan with memory (R1, R3).",
        request=CreateIn,
        responses={201: AgentListOut, **errors("invalid_config", "plan_required", body=True)},
        examples=[
            OpenApiExample(
                "create",
                value={
                    "name": "Support",
                    "instructions": "Help customers of Acme with their plans.",
                    "memorySettings": {"on": True, "quietMinutes": 15},
                },
                request_only=True,
            )
        ],
    )
    def post(self, request):
        data = parse_body(self.CreateIn, request)
        name = data.pop("name")
        agent = services.agent_create(team=self.team(), name=name, config=data)
        answer = agent_answer(agent, AgentVersion.objects.published(agent))
        return Response({**answer, "createdAt": agent.created_at}, status=status.HTTP_201_CREATED)


# --- One conversation, read -------------------------------------------------------------


class TranscriptMessageOut(serializers.Serializer):
    role = serializers.ChoiceField(
        choices=[Message.Kind.USER, Message.Kind.AGENT], source="kind", help_text="user: the person; agent: the reply."
    )
    text = serializers.CharField()
    at = serializers.DateTimeField(source="created_at")


class TranscriptActionOut(serializers.Serializer):
    name = serializers.CharField()
    status = serializers.CharField()
    at = serializers.DateTimeField(source="created_at")


class TranscriptEventOut(serializers.Serializer):
    type = serializers.CharField(source="kind", help_text="tool_result, file or web_page.")
    text = serializers.CharField()
    at = serializers.DateTimeField(source="created_at")


class ConversationDetailOut(ConversationOut):
    lastActivityAt = serializers.DateTimeField(source="last_activity_at")
    messages = TranscriptMessageOut(
        many=True,
        source="transcript_messages",
        help_text="The person's messages and the agent's replies, oldest first.",
    )
    actions = TranscriptActionOut(many=True, source="transcript_actions", help_text="Actions recorded, oldest first.")
    events = TranscriptEventOut(
        many=True,
        source="transcript_events",
        help_text="Tool results, files and web pages recorded, oldest first (context only, R12).",
    )


def with_transcript(conversation: Conversation) -> Conversation:
    """The conversation with its messages, actions and events read, oldest first (their models'
    ordering): two queries, or none when they were prefetched."""
    items = list(conversation.messages.all())
    conversation.transcript_messages = [m for m in items if m.kind in (Message.Kind.USER, Message.Kind.AGENT)]
    conversation.transcript_events = [m for m in items if m.kind in EVENT_KINDS]
    conversation.transcript_actions = list(conversation.action_runs.all())
    return conversation


def transcript(conversation: Conversation) -> dict:
    return ConversationDetailOut(with_transcript(conversation)).data


class ConversationApi(TeamApi):
    @extend_schema(
        operation_id="conversation_get",
        tags=TAG_CONVERSATIONS,
        summary="conversation.get()",
        description="The conversation with its messages, actions and events, oldest first: the team can "
        "read its chats, also those that used no memory (R20).",
        responses={200: ConversationDetailOut, **errors("conversation_not_found")},
        examples=[
            OpenApiExample(
                "transcript",
                value={
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
                        {"role": "user", "text": "Please renew my plan.", "at": "2026-11-30T10:00:05Z"},
                        {
                            "role": "agent",
                            "text": "Done: your plan is renewed until next November.",
                            "at": "2026-11-30T10:00:07Z",
                        },
                    ],
                    "actions": [{"name": "renew_plan", "status": "succeeded", "at": "2026-11-30T10:00:06Z"}],
                    "events": [{"type": "tool_result", "text": '{"renewed": true}', "at": "2026-11-30T10:00:06Z"}],
                },
                response_only=True,
            )
        ],
    )
    def get(self, request, conversation_id):
        conversation = self.conversation(conversation_id)
        return Response(transcript(conversation))


__all__ = ["AgentListApi", "ConversationApi", "transcript", "with_transcript"]
