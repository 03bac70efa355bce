"""What every API class shares: strict input fields, unknown fields refused, the team's scope,
and the documented error answers. The endpoint classes live in `surfaces/api/agents.py`,
`surfaces/api/memory.py` and `surfaces/api/consent.py`; the routes in `agentnava_site/api_urls.py`."""

import functools
from typing import Protocol, cast

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, inline_serializer
from rest_framework import serializers
from rest_framework.views import APIView

from agents import access, end_user_ids, services
from agents.end_user_ids import end_user_id_refusal
from agents.errors import AppError
from agents.models import Agent, Conversation, EndUser, Team
from agents.selectors import end_user_of
from surfaces.http.errors import error_codes
from surfaces.http.idempotency import IdempotentWrites

# --- Strict input fields ------------------------------------------------------------------
# DRF's own fields coerce ("true" -> True, "15" -> 15, 15 -> "15"). The API takes JSON, so a
# wrong type is refused instead of guessed.


class StrictBooleanField(serializers.BooleanField):
    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictIntegerField(serializers.IntegerField):
    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """Text only (DRF's CharField would take 15 as "15"); NUL is refused by DRF's validator."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictChoiceField(serializers.ChoiceField):
    """One of the choices, of the same JSON type (DRF's ChoiceField would take "15" for 15)."""

    def to_internal_value(self, data):
        for value in self.choices:
            if type(value) is type(data) and value == data:
                return value
        raise serializers.ValidationError(
            f"Must be one of: {', '.join(map(str, self.choices))}.", code="invalid_choice"
        )


class StrictSerializer(serializers.Serializer):
    """An input serializer that refuses fields it does not declare, naming the first one.
    `read_only_names` are fields the API answers but never takes (said so, not "unknown")."""

    read_only_names: tuple[str, ...] = ()

    def to_internal_value(self, data):
        if isinstance(data, dict):
            for key in data:
                if key in self.read_only_names:
                    raise serializers.ValidationError({key: ["Read-only: it cannot be set here."]})
                if key not in self.fields or self.fields[key].read_only:
                    raise serializers.ValidationError({str(key): ["Unknown field."]})
        return super().to_internal_value(data)


class StrictQuerySerializer(StrictSerializer):
    """Query parameters, each given once; unknown ones refused like unknown body fields."""

    @classmethod
    def from_request(cls, request):
        params = request.query_params
        for key in params:
            if len(params.getlist(key)) > 1:
                raise serializers.ValidationError({key: ["Give this parameter once."]})
        serializer = cls(data=params.dict())
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data


def parse_body(serializer_class, request) -> dict:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


# --- Scope ----------------------------------------------------------------------------------


class Caller(Protocol):
    """Who an API request is from (`surfaces.api.auth.ApiKeyPrincipal`): a team, through one of its
    keys, acting as `actor`."""

    team: Team
    actor: access.Actor


@functools.cache
def query_names(query_in: type[StrictQuerySerializer]) -> frozenset[str]:
    """The query parameters a class's `QueryIn` takes (its fields: the same for every request, so
    read once, not built again for each)."""
    return frozenset(query_in().fields)


class TeamApi(IdempotentWrites, APIView):
    """An API class whose caller is a team, through one of its keys (authentication, the
    per-key throttle and the error shape come from REST_FRAMEWORK settings).

    Query parameters are part of the contract like body fields: a GET takes only the fields of
    its class's `QueryIn` (a `StrictQuerySerializer`), every other method none, and anything else
    is refused (400 `invalid_request` naming it) before the view runs, after authentication.

    `role_required` maps a method to the permission (`agents.roles`) its caller's role must have:
    a key whose maker lacks it is refused (403 `admin_only`) before the view runs."""

    role_required: dict[str, str] = {}

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        query_in = getattr(self, "QueryIn", None) if request.method in ("GET", "HEAD") else None
        allowed = query_names(query_in) if query_in is not None else frozenset()
        for key in request.query_params:
            if key not in allowed:
                raise serializers.ValidationError({str(key) or "query": ["Unknown query parameter."]})
        permission = self.role_required.get(request.method)
        if permission is not None:
            access.require(self.actor(), permission)
        self.idempotency_claim(request)  # last: a write with an Idempotency-Key runs once (IdempotentWrites)

    def caller(self) -> "Caller":
        # DRF puts whatever the authentication returns in request.user; its stubs type it as a user.
        return cast(Caller, self.request.user)

    def actor(self) -> access.Actor:
        """Who asks: the key's maker with their role now (`agents.access.actor_for_key`)."""
        return self.caller().actor

    def team(self) -> Team:
        return self.caller().team

    def agent(self, agent_id: str) -> Agent:
        """The key's team's agent; another team's answers exactly as a missing one."""
        agent = None
        if usable_id(agent_id, Agent._meta.get_field("public_id").max_length):
            agent = Agent.objects.select_related("team").filter(public_id=agent_id, team=self.team()).first()
        if agent is None:
            raise AppError("agent_not_found", "No agent with this id.")
        return agent

    def conversation(self, conversation_id: str) -> Conversation:
        conversation = None
        if usable_id(conversation_id, Conversation._meta.get_field("public_id").max_length):
            conversation = (
                Conversation.objects.select_related("agent__team", "version", "end_user")
                .filter(public_id=conversation_id, agent__team=self.team())
                .first()
            )
        if conversation is None:
            raise AppError("conversation_not_found", "No conversation with this id.")
        return conversation


# What an operation that takes an endUserId to write (a path or a body) can answer about it.
END_USER_ID_ERRORS = (end_user_ids.INVALID, end_user_ids.NOT_NORMAL)


def end_user_id_for_lookup(end_user_id: str) -> str | None:
    """An endUserId from a path, checked as the services check it (`agents.end_user_ids`): one not
    in its normal form is refused (400, never trimmed into someone else's); one that cannot name
    anybody (empty, too long) is None, so it is simply not found."""
    refusal = end_user_id_refusal(end_user_id)
    if refusal is None:
        return end_user_id
    if refusal[0] == end_user_ids.NOT_NORMAL:
        raise AppError(*refusal, field="endUserId")
    return None


def end_user_lookup(agent: Agent, end_user_id: str) -> EndUser | None:
    """The agent's end user for an endUserId from a path, or None (a non-normal id: 400)."""
    external_id = end_user_id_for_lookup(end_user_id)
    return end_user_of(agent, external_id) if external_id is not None else None


def end_user_for_write(agent: Agent, end_user_id: str) -> EndUser:
    """The agent's end user for an endUserId from a path, made if new; a bad id is refused."""
    return services.end_user_get_or_create(agent=agent, external_id=end_user_id)


def usable_id(value: str, max_length: int | None) -> bool:
    """Whether an id from a path could name a row at all. PostgreSQL refuses NUL in text, so such an
    id is simply not found (never a server error)."""
    return 0 < len(value) and (max_length is None or len(value) <= max_length) and "\x00" not in value


# --- Documentation of errors -------------------------------------------------------------


@functools.cache
def error_schema():
    """The error body's schema, built once, on first use, from the one table of codes."""
    return inline_serializer(
        name="Error",
        fields={
            "error": inline_serializer(
                name="ErrorBody",
                fields={
                    "code": serializers.ChoiceField(
                        choices=[(code, f"{status}: {text}") for code, (status, text) in error_codes().items()],
                        help_text="What went wrong, for code.",
                    ),
                    "message": serializers.CharField(help_text="What went wrong, for a person."),
                    "field": serializers.CharField(
                        required=False, help_text="The field it is about, when there is one."
                    ),
                },
            )
        },
    )


# Any call can answer these; `invalid_request` because an unknown query parameter is refused on every path.
COMMON_ERRORS = ("invalid_request", "not_authenticated", "invalid_api_key", "rate_limited", "not_acceptable")
BODY_ERRORS = ("invalid_request", "invalid_json", "unsupported_media_type", "request_too_large")


def errors(*codes: str, body: bool = False) -> dict:
    """`responses` entries for these error codes (plus the ones every call can answer), grouped by
    status, each listing its codes and when they happen."""
    codes_known = error_codes()
    by_status: dict[int, list[str]] = {}
    for code in (*codes, *(BODY_ERRORS if body else ()), *COMMON_ERRORS):
        status = codes_known[code][0]
        if code not in by_status.setdefault(status, []):
            by_status[status].append(code)
    out = {}
    for status, status_codes in sorted(by_status.items()):
        description = "; ".join(f"`{code}`: {codes_known[code][1]}" for code in status_codes)
        out[status] = OpenApiResponse(
            response=error_schema(),
            description=description,
            examples=[
                OpenApiExample(
                    code,
                    value={"error": {"code": code, "message": codes_known[code][1]}},
                    response_only=True,
                    status_codes=[str(status)],
                )
                for code in status_codes
            ],
        )
    return out


NO_CONTENT = OpenApiResponse(description="Done; no body.")


def api_description() -> str:
    """The schema's introduction: how to call the API, and every error code it answers."""
    rows = "\n".join(f"| `{code}` | {status} | {text} |" for code, (status, text) in error_codes().items())
    return (
        "Per-end-user memory for customer-facing AI agents: the REST API behind the JavaScript client "
        "(`/static/sdk/agentnava.js`).\n\n"
        "**Keys.** Send a team API key as `Authorization: Bearer ank_...` (create one with "
        "`python manage.py create_api_key --team SLUG`). A key sees only its team's agents: another "
        "team's agent or conversation answers 404 exactly like a missing one. Each key is limited to a "
        "rate (429 `rate_limited` with `Retry-After`).\n\n"
        "**Bodies** are JSON objects with the names below; an unknown or read-only field is refused "
        "(400 `invalid_request` naming it), as is a wrong type. **Query parameters** are strict too: "
        "an operation takes only the ones it lists, each once, and any other is refused the same way.\n\n"
        "**Retrying a write.** Every POST, PUT, PATCH and DELETE takes an `Idempotency-Key` header (a UUID, "
        "or your own operation's id): the same key with the same request within 24 hours answers the first "
        "answer again, status and body, with `Idempotent-Replayed: true`, and does nothing; with another "
        "request, 422 `idempotency_key_reused`; while the first is still being answered, 409 "
        "`idempotency_key_in_use`. Keys are per team; a 5xx answer is not kept.\n\n"
        '**Errors** all have one shape: `{"error": {"code", "message", "field"?}}`.\n\n'
        "| code | status | when |\n| --- | --- | --- |\n" + rows
    )
