"""The REST API for memories: the list, one end user's memory (get, set, delete, stop) and the
end user's erase. Thin classes over `memory.store.services`; the privacy guards are `memory.guards`'s,
called by `memory_set` as on every other write path."""

from datetime import datetime, tzinfo

from django.db import transaction
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from agents.errors import AppError
from agents.models import Agent
from memory import guards as policy
from memory.models import MemoryRun
from memory.store import services
from memory.store.selectors import api_memory_read, memories_page, memories_page_cursor
from memory.store.version import etag, memory_version, versions_from_if_match
from surfaces.http.base import (
    END_USER_ID_ERRORS,
    NO_CONTENT,
    StrictBooleanField,
    StrictCharField,
    StrictQuerySerializer,
    StrictSerializer,
    TeamApi,
    end_user_for_write,
    end_user_id_for_lookup,
    end_user_lookup,
    errors,
    parse_body,
    usable_id,
)
from surfaces.http.pagination import cursor_decode

TAG_MEMORY = ["Memory"]
MAX_SET_CHARS = 100_000  # a bound on the body; the memory's own limits are policy's (30 lines, 300 chars)

END_USER_PATH = OpenApiParameter(
    "end_user_id",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="Your endUserId for this person, percent-encoded as one path segment "
    "(`encodeURIComponent(id)`: `bob/memory` is `bob%2Fmemory`, another person than `bob`). It must be in its "
    "normal form: Unicode NFC, no whitespace at the ends, no control characters.",
)
ETAG = OpenApiParameter(
    "ETag",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    response=[200],
    description="The version of the memory this answer shows. Send it back as `If-Match` on a set or delete "
    "made from it: a memory changed meanwhile answers 412 `memory_changed` and nothing changes.",
)
IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description="The `ETag` of the memory this write was made on (compare-and-set): when the memory no longer "
    "reads that version, 412 `memory_changed` and nothing changes. Without it (or with `*`) the last write "
    "wins, as before.",
)


def with_etag(answer: dict) -> Response:
    """A memory's answer with its version as the `ETag` header."""
    version = memory_version(text=answer["text"], stopped=answer["stopped"])
    return Response(answer, headers={"ETag": etag(version)})


def refused_write(refused: policy.MemoryRefused) -> AppError:
    """A refused write as the API's error (the codes are in memory.store.errors)."""
    status_and_code = {
        "stopped": (409, "memory_stopped"),
        "changed": (412, "memory_changed"),
        "plan_required": (403, "plan_required"),
        "memory_off": (409, "memory_off"),
    }
    if refused.reason in status_and_code:
        code_status, code = status_and_code[refused.reason]
        message = MEMORY_CHANGED if refused.reason == "changed" else refused.message
        return AppError(code, message, status=code_status)
    return AppError("memory_refused", refused.message, field="text")


MEMORY_CHANGED = (
    "The memory changed since the version named in If-Match; nothing changed. Read it again (GET) and retry."
)

# --- Reads ------------------------------------------------------------------------------------


def memory_answer(agent: Agent, end_user) -> dict:
    """What a write answers: the memory as memory.get reads it now."""
    _, read = api_memory_read(team_id=agent.team_id, agent_public_id=agent.public_id, external_id=end_user.external_id)
    assert read is not None  # the end user was just written to
    return api_output(read)


def iso_time(value: datetime | None, zone: tzinfo) -> str | None:
    """An aware datetime as DRF's DateTimeField renders it (ISO 8601 in the current time zone, UTC
    as "Z"), without the field's per-call look-ups (its format setting, the current zone): `zone`
    is the current zone, read once a page (tests/memory/test_api.py checks the two agree)."""
    if value is None:
        return None
    text = value.astimezone(zone).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def api_output(read: dict, zone: tzinfo | None = None) -> dict:
    """A read from memory.store.selectors as MemoryOut would render it, without the serializer's cost
    (the hot path: tests/memory/test_api.py checks the two agree). `zone`: the current time zone, when
    the caller renders many reads."""
    if zone is None:
        zone = timezone.get_current_timezone()
    last_run = read["lastRun"]
    return {
        "endUserId": read["endUserId"],
        "text": read["text"],
        "stopped": read["stopped"],
        "updatedAt": iso_time(read["updatedAt"], zone),
        "readUpTo": iso_time(read["readUpTo"], zone),
        "lastRun": {
            "at": last_run.get("at"),
            "added": last_run.get("added"),
            "replaced": last_run.get("replaced"),
            "removed": last_run.get("removed"),
        }
        if last_run
        else None,
        "stoppedAt": iso_time(read["stoppedAt"], zone),
        "agreedAt": iso_time(read["agreedAt"], zone),
        "lastChatAt": iso_time(read["lastChatAt"], zone),
        "conversations": read["conversations"],
    }


# --- Shapes -----------------------------------------------------------------------------------


class LastRunOut(serializers.Serializer):
    at = serializers.DateTimeField()
    added = serializers.IntegerField()
    replaced = serializers.IntegerField()
    removed = serializers.IntegerField()


class MemoryOut(serializers.Serializer):
    endUserId = serializers.CharField()
    text = serializers.CharField(help_text="One fact per line, what the agent reads; empty when stopped.")
    stopped = serializers.BooleanField(help_text="They asked to stop: nothing is kept and chats do not use memory.")
    updatedAt = serializers.DateTimeField(
        allow_null=True,
        help_text="When it last changed (null if it never had a line). Pass it as `before` to page the list.",
    )
    readUpTo = serializers.DateTimeField(
        allow_null=True, help_text="How far the memory has read their chats; nothing older can change it."
    )
    lastRun = LastRunOut(
        allow_null=True, help_text="What the last update after a chat did, as counts; none of their words."
    )
    stoppedAt = serializers.DateTimeField(allow_null=True, help_text="When they asked to stop.")
    agreedAt = serializers.DateTimeField(allow_null=True, help_text="When they said yes, where the agent asks first.")
    lastChatAt = serializers.DateTimeField(allow_null=True, help_text="Their newest chat on this agent.")
    conversations = serializers.IntegerField(help_text="How many of their chats on this agent hold a message.")


class MemoryPageNext(serializers.Serializer):
    before = serializers.DateTimeField(help_text="The last memory's updatedAt.")
    cursor = serializers.CharField(
        help_text="Exact continuation after the last memory, even when several share its updatedAt."
    )


class MemoryPageOut(serializers.Serializer):
    memories = MemoryOut(many=True)
    next = MemoryPageNext(allow_null=True, help_text="How to get the next page; null on the last.")


# --- Endpoints --------------------------------------------------------------------------------


class MemoryListApi(TeamApi):
    class QueryIn(StrictQuerySerializer):
        limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=200)
        before = serializers.DateTimeField(required=False, help_text="An updatedAt: memories changed before it.")
        cursor = serializers.CharField(required=False, max_length=200, help_text="next.cursor of the previous page.")

        def validate(self, data):
            if "before" in data and "cursor" in data:
                raise serializers.ValidationError({"cursor": ["Pass before or cursor, not both."]})
            return data

    @extend_schema(
        operation_id="agent_memories",
        tags=TAG_MEMORY,
        summary="agent.memories({limit, before})",
        description="Who has a memory on this agent, newest change first. Page with `before` = the last "
        "`updatedAt`, or exactly with `cursor` = `next.cursor`.",
        parameters=[QueryIn],
        responses={200: MemoryPageOut, **errors("invalid_request", "agent_not_found")},
    )
    def get(self, request, agent_id):
        if not usable_id(agent_id, Agent._meta.get_field("public_id").max_length):
            self.agent(agent_id)  # agent_not_found
        query = self.QueryIn.from_request(request)
        after_key = cursor_decode(query["cursor"]) if "cursor" in query else None
        # One statement: the key's team's agent and the page (memory.store.selectors).
        page, more = memories_page(
            team_agent=(self.team().pk, agent_id), limit=query["limit"], before=query.get("before"), after_key=after_key
        )
        if not page:
            self.agent(agent_id)  # a missing agent (or another team's) reads as an empty page: tell them apart
        zone = timezone.get_current_timezone()
        next_page = None
        if more:
            next_page = {"before": iso_time(page[-1]["updatedAt"], zone), "cursor": memories_page_cursor(page[-1])}
        return Response({"memories": [api_output(read, zone) for read in page], "next": next_page})


class MemoryApi(TeamApi):
    class SetIn(StrictSerializer):
        text = StrictCharField(
            allow_blank=True,
            trim_whitespace=False,
            max_length=MAX_SET_CHARS,
            help_text="The whole memory, one fact per line: at most 30 lines of 300 characters, and no password, key, card or id number.",
        )

    @extend_schema(
        operation_id="memory_get",
        tags=TAG_MEMORY,
        summary="endUser.memory.get()",
        parameters=[END_USER_PATH, ETAG],
        description="Their memory with the R21 fields, and its version as the `ETag` header (send it as "
        "`If-Match` on a set or delete made from this read). A known end user whose memory is empty (never "
        "written, deleted, or emptied) answers 200 with empty `text` and the fields that apply; an endUserId "
        "this agent never met answers 404 `end_user_not_found`.",
        responses={200: MemoryOut, **errors("end_user_id_not_normal", "agent_not_found", "end_user_not_found")},
    )
    def get(self, request, agent_id, end_user_id):
        external_id = end_user_id_for_lookup(end_user_id)
        found_agent, read = False, None
        if usable_id(agent_id, Agent._meta.get_field("public_id").max_length):
            usable = external_id is not None
            # One statement: the agent (the key's team's), the end user through its (agent,
            # external_id) index, the memory and its R21 fields (memory.store.selectors).
            found_agent, read = api_memory_read(
                team_id=self.team().pk, agent_public_id=agent_id, external_id=external_id if usable else ""
            )
            read = read if usable else None
        if not found_agent:
            raise AppError("agent_not_found", "No agent with this id.", status=404)
        if read is None:
            raise AppError("end_user_not_found", "No end user with this endUserId on this agent.", status=404)
        return with_etag(api_output(read))

    @extend_schema(
        operation_id="memory_set",
        tags=TAG_MEMORY,
        summary="endUser.memory.set(text)",
        description="Replaces the whole memory. Refused with `memory_refused`, nothing changed, when a line "
        "looks like a password, key, card or government id number, a line is over 300 characters, or there "
        "are more than 30 lines (R7); with `plan_required` on a plan without memory (R3) and `memory_off` "
        "when the agent's published version has memory off (R4; delete, stop and erase still work); with "
        "`memory_changed` when `If-Match` names a version the memory no longer reads. Answers the memory "
        "with its new `ETag`.",
        parameters=[END_USER_PATH, IF_MATCH, ETAG],
        request=SetIn,
        responses={
            200: MemoryOut,
            **errors(
                "memory_refused",
                *END_USER_ID_ERRORS,
                "plan_required",
                "agent_not_found",
                "memory_stopped",
                "memory_off",
                "memory_changed",
                body=True,
            ),
        },
        examples=[
            OpenApiExample(
                "set", value={"text": "Prefers email over phone.\nWorks from the Pune office."}, request_only=True
            )
        ],
    )
    def put(self, request, agent_id, end_user_id):
        agent = self.agent(agent_id)
        data = parse_body(self.SetIn, request)
        made_on = versions_from_if_match(request.headers.get("If-Match", ""))
        try:
            with transaction.atomic():  # a refusal leaves no new end user behind either
                end_user = end_user_for_write(agent, end_user_id)
                services.memory_set(end_user=end_user, text=data["text"], kind=MemoryRun.Kind.API_SET, made_on=made_on)
        except policy.MemoryRefused as refused:
            raise refused_write(refused) from None
        return with_etag(memory_answer(agent, end_user))

    @extend_schema(
        operation_id="memory_delete",
        tags=TAG_MEMORY,
        summary="endUser.memory.delete()",
        description="Gone, and old chats cannot bring it back: what the memory has read moves to now. "
        "Answers 204 also when there was nothing to delete, and whatever the plan or memory setting. With "
        "`If-Match`, refused with `memory_changed` (nothing deleted) when the memory no longer reads that version.",
        parameters=[END_USER_PATH, IF_MATCH],
        responses={204: NO_CONTENT, **errors(*END_USER_ID_ERRORS, "agent_not_found", "memory_changed")},
    )
    def delete(self, request, agent_id, end_user_id):
        end_user = end_user_lookup(self.agent(agent_id), end_user_id)
        made_on = versions_from_if_match(request.headers.get("If-Match", ""))
        if end_user is not None:
            try:
                services.memory_delete(end_user=end_user, kind=MemoryRun.Kind.API_SET, made_on=made_on)
            except policy.MemoryRefused as refused:
                raise refused_write(refused) from None
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemoryStopApi(TeamApi):
    class StopIn(StrictSerializer):
        stop = StrictBooleanField(
            required=False, default=True, help_text="true (the default): stop; false: they changed their mind."
        )

    @extend_schema(
        operation_id="memory_stop",
        tags=TAG_MEMORY,
        summary="endUser.memory.stop(flag)",
        description="`stop: true`: they asked to stop: the memory is emptied, nothing more is kept, and new "
        "chats do not use it. `stop: false`: memory resumes from now. Answers the memory.",
        parameters=[END_USER_PATH, ETAG],
        request=StopIn,
        responses={200: MemoryOut, **errors(*END_USER_ID_ERRORS, "agent_not_found", body=True)},
    )
    def post(self, request, agent_id, end_user_id):
        agent = self.agent(agent_id)
        data = parse_body(self.StopIn, request)
        with transaction.atomic():
            end_user = end_user_for_write(agent, end_user_id)
            (services.memory_stop if data["stop"] else services.memory_resume)(
                end_user=end_user, kind=MemoryRun.Kind.API_SET
            )
        return with_etag(memory_answer(agent, end_user))


class ErasedOut(serializers.Serializer):
    endUserId = serializers.CharField()
    memories = serializers.IntegerField(help_text="Memory rows removed (0 or 1), with their horizon.")
    lines = serializers.IntegerField(help_text="Lines the memory held.")
    memoryRuns = serializers.IntegerField(help_text="Audit rows of memory runs.")
    conversations = serializers.IntegerField()
    messages = serializers.IntegerField()
    actions = serializers.IntegerField()
    consents = serializers.IntegerField()
    endUsers = serializers.IntegerField(help_text="1: the end user itself.")


class EndUserApi(TeamApi):
    @extend_schema(
        operation_id="end_user_erase",
        tags=TAG_MEMORY,
        summary="endUser.erase()",
        description="The memory (with what it had read and any stop) and everything else on this agent about "
        "this end user: conversations, messages, actions, consent. Answers what was removed, counted per "
        "kind; 404 `end_user_not_found` when this agent knows no such endUserId, so a typo in a deletion "
        "request never looks done.",
        parameters=[END_USER_PATH],
        responses={200: ErasedOut, **errors("end_user_id_not_normal", "agent_not_found", "end_user_not_found")},
        examples=[
            OpenApiExample(
                "erased",
                value={
                    "endUserId": "u_ananya",
                    "memories": 1,
                    "lines": 2,
                    "memoryRuns": 3,
                    "conversations": 2,
                    "messages": 9,
                    "actions": 1,
                    "consents": 1,
                    "endUsers": 1,
                },
                response_only=True,
            )
        ],
    )
    def delete(self, request, agent_id, end_user_id):
        end_user = end_user_lookup(self.agent(agent_id), end_user_id)
        if end_user is None:
            raise AppError("end_user_not_found", "No end user with this endUserId on this agent.", status=404)
        removed = services.end_user_erase(end_user=end_user)
        return Response(ErasedOut({"endUserId": end_user.external_id, **removed}).data)


__all__ = ["EndUserApi", "MemoryApi", "MemoryListApi", "MemoryStopApi", "api_output", "memory_answer"]
