"""The REST API for agents, their versions, conversations, messages, events and the Builder.

Thin classes: parse and check the input, find the key's team's resource, call one service, answer.
Every rule (configuration, conversation start, chat turn) lives in the services they call.
"""

from django.core.validators import RegexValidator
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from agents import agent_config, keyset, services
from agents.models import ActionRun, Agent, AgentVersion, Conversation, Message
from consent.notice import notice_text
from memory.store import settings as memory_settings
from memory.tools import builder
from surfaces.chat import record, start
from surfaces.chat.send import conversation_send
from surfaces.http.base import (
    END_USER_ID_ERRORS,
    NO_CONTENT,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictIntegerField,
    StrictQuerySerializer,
    StrictSerializer,
    TeamApi,
    errors,
    parse_body,
)

TAG_AGENTS = ["Agents"]
TAG_CONVERSATIONS = ["Conversations"]
MAX_EVENT_TEXT_CHARS = 50_000


# What a model-backed endpoint can answer when the engine fails (agents.engines.EngineError).
MODEL_ERRORS = (
    "model_error",
    "model_malformed",
    "model_timeout",
    "model_rate_limited",
    "model_unreachable",
    "model_refused",
    "model_too_large",
)

# --- Shapes shared by the agent's answers -----------------------------------------------


class ActionOut(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a declared field, not Field.label: DRF's metaclass takes it off the class


# The memorySettings fields are the agent resource's wire shape; their limits are memory's, imported
# from it (memory.store.settings), so they are the same whatever loads first.
class MemorySettingsOut(serializers.Serializer):
    on = serializers.BooleanField(help_text="Memory is off until the team turns it on (R1).")
    instructions = serializers.CharField(
        help_text="What to keep or leave out, after the defaults; wins where they differ."
    )
    keepForDays = serializers.IntegerField(help_text="How long to keep a memory, from the end user's last chat.")
    quietMinutes = serializers.ChoiceField(
        choices=memory_settings.QUIET_MINUTES_CHOICES,
        help_text="How long a chat stays quiet before the memory is updated.",
    )
    showSwitch = serializers.BooleanField(help_text="End users see a switch that turns memory off for a chat.")
    askFirst = serializers.BooleanField(help_text="Our chat surfaces ask yes or no before memory is used.")
    privacyUrl = serializers.CharField(help_text="The privacy policy the notice links to; empty when none.")


class ConfigOut(serializers.Serializer):
    instructions = serializers.CharField()
    guardrails = serializers.CharField()
    actions = ActionOut(many=True)
    memorySettings = MemorySettingsOut()


class AgentMemorySettingsOut(MemorySettingsOut):
    notice = serializers.CharField(
        allow_null=True,
        help_text="The privacy notice to show near the message box of a chat you draw yourself (R27); "
        "null while memory is off (or the team's plan has no memory).",
    )


class AgentOut(serializers.Serializer):
    id = serializers.CharField(help_text="The agent's id, e.g. agt_493fb4f0cf13.")
    name = serializers.CharField()
    version = serializers.IntegerField(help_text="The published version's number.")
    publishedAt = serializers.DateTimeField()
    instructions = serializers.CharField()
    guardrails = serializers.CharField()
    actions = ActionOut(many=True)
    memorySettings = AgentMemorySettingsOut()


def agent_answer(agent: Agent, version: AgentVersion) -> dict:
    config = version.config
    settings = dict(config["memorySettings"])
    # Only when memory can be used: on in this version, and on a plan that has it (R3).
    in_use = settings["on"] and agent.team.has_memory
    settings["notice"] = (notice_text(settings, agent_name=agent.name) or None) if in_use else None
    return AgentOut(
        {
            "id": agent.public_id,
            "name": agent.name,
            "version": version.number,
            "publishedAt": version.published_at,
            "instructions": config["instructions"],
            "guardrails": config["guardrails"],
            "actions": config["actions"],
            "memorySettings": settings,
        }
    ).data


class MemorySettingsIn(StrictSerializer):
    read_only_names = ("notice",)
    on = StrictBooleanField(required=False)
    instructions = StrictCharField(required=False, allow_blank=True, max_length=memory_settings.MAX_INSTRUCTIONS_CHARS)
    keepForDays = StrictIntegerField(
        required=False,
        min_value=memory_settings.KEEP_FOR_DAYS_MIN,
        max_value=memory_settings.KEEP_FOR_DAYS_MAX,
    )
    quietMinutes = StrictChoiceField(required=False, choices=memory_settings.QUIET_MINUTES_CHOICES)
    showSwitch = StrictBooleanField(required=False)
    askFirst = StrictBooleanField(required=False)
    privacyUrl = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=memory_settings.MAX_PRIVACY_URL_CHARS,
        help_text="An http(s) address, or empty.",
    )


class ActionIn(StrictSerializer):
    name = StrictCharField(max_length=64, help_text="Lower-case letters, digits and underscores, e.g. renew_plan.")
    label = StrictCharField(  # type: ignore[assignment]  # a declared field, not Field.label: DRF's metaclass takes it off the class
        required=False, allow_blank=True, max_length=80, help_text="Past tense, e.g. Renewed the plan."
    )


# --- The agent ------------------------------------------------------------------------------


class AgentApi(TeamApi):
    """GET, PATCH (publishes at once) and DELETE one agent (owners and admins only)."""

    role_required = {"DELETE": "agent_delete"}

    class UpdateIn(StrictSerializer):
        read_only_names = ("id", "name", "version", "publishedAt")
        instructions = StrictCharField(required=False, allow_blank=True, max_length=8000)
        guardrails = StrictCharField(required=False, allow_blank=True, max_length=8000)
        actions = serializers.ListField(child=ActionIn(), required=False, max_length=agent_config.MAX_ACTIONS)
        memorySettings = MemorySettingsIn(required=False)

    @extend_schema(
        operation_id="agent_get",
        tags=TAG_AGENTS,
        summary="agent.get()",
        description="The agent, its published version, and `memorySettings` with every setting and the "
        "privacy `notice` to show in a chat you draw yourself.",
        responses={200: AgentOut, **errors("agent_not_found")},
    )
    def get(self, request, agent_id):
        agent = self.agent(agent_id)
        return Response(agent_answer(agent, AgentVersion.objects.published(agent)))

    @extend_schema(
        operation_id="agent_update",
        tags=TAG_AGENTS,
        summary="agent.update({...})",
        description="Change the configuration and publish it as a new numbered version at once (R2). "
        "`memorySettings` merges field by field; `instructions`, `guardrails` and `actions` replace. "
        "No change, no new version. Answers the agent.",
        request=UpdateIn,
        responses={200: AgentOut, **errors("invalid_config", "plan_required", "agent_not_found", body=True)},
    )
    def patch(self, request, agent_id):
        agent = self.agent(agent_id)
        changes = parse_body(self.UpdateIn, request)
        version = services.agent_update(agent=agent, changes=changes, source="api")
        return Response(agent_answer(agent, version))

    @extend_schema(
        operation_id="agent_delete",
        tags=TAG_AGENTS,
        summary="Delete the agent",
        description="Deletes the agent with every version, end user, conversation and memory on it. "
        "Only a key made by a team owner or admin (or on the command line) may: 403 `admin_only` otherwise.",
        responses={204: NO_CONTENT, **errors("admin_only", "agent_not_found")},
    )
    def delete(self, request, agent_id):
        services.agent_delete(agent=self.agent(agent_id), actor=self.actor())
        return Response(status=status.HTTP_204_NO_CONTENT)


class VersionOut(serializers.Serializer):
    number = serializers.IntegerField()
    publishedAt = serializers.DateTimeField(source="published_at")
    source = serializers.CharField(help_text="Where it was published from: create, web, api, builder, restore, seed.")  # type: ignore[assignment]  # a declared field, not Field.source: DRF's metaclass takes it off the class
    config = ConfigOut()


class VersionPageNext(serializers.Serializer):
    before = serializers.IntegerField()


class VersionListApi(TeamApi):
    class QueryIn(StrictQuerySerializer):
        limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=200)
        before = serializers.IntegerField(required=False, min_value=1, help_text="Versions numbered below this.")

    class PageOut(serializers.Serializer):
        versions = VersionOut(many=True)
        next = VersionPageNext(allow_null=True, help_text="The query of the next page; null on the last.")

    @extend_schema(
        operation_id="agent_versions",
        tags=TAG_AGENTS,
        summary="The agent's versions, newest first",
        parameters=[QueryIn],
        responses={200: PageOut, **errors("invalid_request", "agent_not_found")},
    )
    def get(self, request, agent_id):
        agent = self.agent(agent_id)
        query = self.QueryIn.from_request(request)
        page, more = keyset.newest_first(
            AgentVersion.objects.filter(agent=agent),
            keys=("number",),
            limit=query["limit"],
            after=(query["before"],) if "before" in query else None,
        )
        return Response(self.PageOut({"versions": page, "next": {"before": page[-1].number} if more else None}).data)


# --- Conversations ------------------------------------------------------------------------


class ConversationOut(serializers.Serializer):
    id = serializers.CharField(source="public_id", help_text="The conversation's id, e.g. conv_5f0c...")
    agentId = serializers.CharField(source="agent.public_id")
    endUserId = serializers.CharField(source="end_user.external_id")
    usesMemory = serializers.BooleanField(
        source="uses_memory", help_text="Whether this conversation reads and adds to the memory."
    )
    memoryOffReason = serializers.ChoiceField(
        source="memory_off_reason",
        choices=Conversation.MemoryOff.values,
        allow_null=True,
        help_text="Why memory is not used; null when it is.",
    )
    version = serializers.IntegerField(source="version.number", help_text="The version this conversation runs on.")
    project = serializers.CharField(allow_null=True)
    startedAt = serializers.DateTimeField(source="started_at")

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["memoryOffReason"] = data["memoryOffReason"] or None
        data["project"] = data["project"] or None
        return data


class ConversationStartApi(TeamApi):
    class StartIn(StrictSerializer):
        endUserId = StrictCharField(
            max_length=200,
            trim_whitespace=False,
            help_text="Your stable id for this person (R24), in its normal form (NFC, no whitespace at the ends, "
            "no control characters): it is never trimmed.",
        )
        memory = StrictBooleanField(
            required=False, default=True, help_text="false: use nothing remembered and add nothing."
        )
        project = StrictCharField(
            required=False, allow_blank=True, max_length=100, help_text="Inside a project, memory is not used (R23)."
        )

    @extend_schema(
        operation_id="agent_start",
        tags=TAG_CONVERSATIONS,
        summary="agent.start({endUserId, memory?, project?})",
        description="Start a conversation on the published version. Whether it uses memory is decided "
        "once, here: not with `memory: false`, memory off, a plan without memory, a project, an end user "
        "who asked to stop, or ask-first without a yes.",
        request=StartIn,
        responses={201: ConversationOut, **errors(*END_USER_ID_ERRORS, "agent_not_found", body=True)},
    )
    def post(self, request, agent_id):
        agent = self.agent(agent_id)
        data = parse_body(self.StartIn, request)
        conversation = start.conversation_start(
            agent=agent,
            external_id=data["endUserId"],
            memory=data["memory"],
            project=data.get("project", ""),
            source="api",
        )
        return Response(ConversationOut(conversation).data, status=status.HTTP_201_CREATED)


class MessageSendApi(TeamApi):
    class SendIn(StrictSerializer):
        text = StrictCharField(
            allow_blank=True, trim_whitespace=False, help_text="What the person typed; at most 4000 characters."
        )

    class ReplyOut(serializers.Serializer):
        conversationId = serializers.CharField()
        reply = serializers.CharField(help_text="The agent's reply.")
        handledAsRequest = serializers.BooleanField(
            help_text='true when the message was a memory request ("stop remembering me", "forget ...") answered as such.'
        )
        sentAt = serializers.DateTimeField()

    @extend_schema(
        operation_id="conversation_send",
        tags=TAG_CONVERSATIONS,
        summary="Send the person's message; answers the agent's reply",
        description="Records the message and the reply together, or nothing when the model fails (502).",
        request=SendIn,
        responses={
            201: ReplyOut,
            **errors(
                "invalid_message",
                "message_too_long",
                "conversation_not_found",
                *MODEL_ERRORS,
                body=True,
            ),
        },
    )
    def post(self, request, conversation_id):
        conversation = self.conversation(conversation_id)
        data = parse_body(self.SendIn, request)
        turn = conversation_send(conversation=conversation, text=data["text"])
        return Response(
            self.ReplyOut(
                {
                    "conversationId": conversation.public_id,
                    "reply": turn.reply.text,
                    "handledAsRequest": turn.handled_as_request,
                    "sentAt": turn.message.created_at,
                }
            ).data,
            status=status.HTTP_201_CREATED,
        )


TEXT_EVENT_TYPES = (Message.Kind.TOOL_RESULT, Message.Kind.FILE, Message.Kind.WEB_PAGE)


class ActionEventIn(StrictSerializer):
    type = StrictChoiceField(choices=["action"])
    name = StrictCharField(
        max_length=64,
        validators=[RegexValidator(agent_config.ACTION_NAME_RE, "An action name such as renew_plan.")],
    )
    status = StrictChoiceField(
        choices=ActionRun.Status.values, help_text="Only a succeeded action can add a dated line."
    )


class TextEventIn(StrictSerializer):
    type = StrictChoiceField(choices=[str(kind) for kind in TEXT_EVENT_TYPES])
    text = StrictCharField(
        max_length=MAX_EVENT_TEXT_CHARS,
        trim_whitespace=False,
        help_text="Context for the chat; never a source for the memory (R12).",
    )


class EventRecordApi(TeamApi):
    class EventOut(serializers.Serializer):
        conversationId = serializers.CharField()
        type = serializers.ChoiceField(choices=["action", *TEXT_EVENT_TYPES])
        recordedAt = serializers.DateTimeField()

    @extend_schema(
        operation_id="conversation_record",
        tags=TAG_CONVERSATIONS,
        summary="Record what ran: an action, a tool result, a file or a web page",
        description="An action (`succeeded` or `failed`) can become a dated line of the memory (R9); "
        "tool results, files and web pages are context only and never written to it (R12).",
        request=PolymorphicProxySerializer(
            component_name="Event",
            serializers={
                "action": ActionEventIn,
                "tool_result": TextEventIn,
                "file": TextEventIn,
                "web_page": TextEventIn,
            },
            resource_type_field_name="type",
        ),
        responses={201: EventOut, **errors("conversation_not_found", body=True)},
    )
    def post(self, request, conversation_id):
        conversation = self.conversation(conversation_id)
        kind = request.data.get("type") if isinstance(request.data, dict) else None
        if kind == "action":
            data = parse_body(ActionEventIn, request)
            run = record.action_run_record(conversation=conversation, name=data["name"], status=data["status"])
            at = run.created_at
        elif isinstance(kind, str) and kind in TEXT_EVENT_TYPES:
            data = parse_body(TextEventIn, request)
            at = record.message_record(conversation=conversation, kind=kind, text=data["text"]).created_at
        else:
            raise serializers.ValidationError(
                {"type": ["One of action, tool_result, file, web_page."]}
                if isinstance(request.data, dict)
                else {"non_field_errors": ["The body must be a JSON object."]}
            )
        return Response(
            self.EventOut({"conversationId": conversation.public_id, "type": kind, "recordedAt": at}).data,
            status=status.HTTP_201_CREATED,
        )


# --- The Builder --------------------------------------------------------------------------


class BuilderApi(TeamApi):
    class MessageIn(StrictSerializer):
        message = StrictCharField(max_length=builder.MAX_MESSAGE_CHARS, help_text="The change, in plain words.")

    class BuilderOut(serializers.Serializer):
        reply = serializers.CharField()
        changes = serializers.ListField(child=serializers.CharField(), help_text="What the draft now changes.")
        draft = ConfigOut(
            allow_null=True, help_text="The draft configuration it changed (waits for Publish); null when none."
        )

    @extend_schema(
        operation_id="agent_builder",
        tags=TAG_AGENTS,
        summary="Tell the Builder a change in plain words",
        description="The Builder drafts the change into the agent's configuration; the draft waits for "
        "Publish, like any other draft. A change the rules refuse (quiet minutes 7, a plan without memory) "
        "changes nothing, and the reply says why.",
        request=MessageIn,
        responses={
            201: BuilderOut,
            **errors(
                "agent_not_found",
                *MODEL_ERRORS,
                body=True,
            ),
        },
    )
    def post(self, request, agent_id):
        agent = self.agent(agent_id)
        data = parse_body(self.MessageIn, request)
        result = builder.builder_message(agent=agent, message=data["message"], user=None)
        return Response(self.BuilderOut(result).data, status=status.HTTP_201_CREATED)


__all__ = [
    "AgentApi",
    "BuilderApi",
    "ConversationStartApi",
    "EventRecordApi",
    "MessageSendApi",
    "VersionListApi",
    "agent_answer",
]
