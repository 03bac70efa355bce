"""The website chat's public endpoints, used by /embed/v1.js from any site (R24-R27), on DRF as
the REST API is.

Thin views: who is asking is authentication (`surfaces.embed.auth`: a signed visitor id, a site
user's id and hash, or a conversation token), the rate limits are throttles counted in order
(`surfaces.embed.throttles`), the body is read by one parser (JSON objects of at most 16 KB), and
each view then checks its fields and calls one service. Errors have the API's shape,
{"error": {"code", "message", "field"?}}, from the project's one exception handler
(`surfaces.http.errors`); an unexpected error is a readable 500 too. No cookie is used, so the
endpoints are CSRF-exempt (DRF's views are); CORS, open to any origin, is django-cors-headers'
(`surfaces.http.cors`). No answer is kept by a cache (`Cache-Control: no-store`).

Endpoints (all JSON):
  GET  /embed/v1/agents/<agent>/config            the notice, the line, the switch and ask-first settings
  POST /embed/v1/agents/<agent>/start             identify the visitor, start a chat (or say: ask first)
  POST /embed/v1/agents/<agent>/consent           a yes or no (the chat's question, or the site's own step)
  POST /embed/v1/conversations/<conv>/transcript  resume a chat after a reload (same visitor only)
  POST /embed/v1/conversations/<conv>/messages    send a message, get the reply
  POST /embed/v1/conversations/<conv>/switch      the visitor's switch: memory off for this chat
"""

import json
import logging

from django.contrib.staticfiles import finders
from django.http import FileResponse, Http404
from rest_framework import exceptions
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.errors import AppError, NotFound
from agents.models import Agent, AgentVersion, Conversation, Message
from agents.services import end_user_get_or_create
from consent.notice import NOTICE_LINE, notice_text
from consent.selectors import consent_state
from consent.services import consent_record
from memory.store.end_user_requests import end_user_memory_state
from surfaces.chat.send import conversation_send, validate_message_text
from surfaces.embed import auth, throttles
from surfaces.embed import services as embed
from surfaces.http.boundary import EMBED, max_body_bytes

log = logging.getLogger(__name__)

TRANSCRIPT_MESSAGES = 50
ASK_FIRST_QUESTION = "Can this assistant remember details from our chats to help next time?"
CONSENT_SOURCES = ("chat_prompt", "site_step")

OFF_LINES: dict[str, str] = {
    Conversation.MemoryOff.REQUESTED: "Memory is off for this chat.",
    Conversation.MemoryOff.SWITCH: "Memory is off for this chat.",
    Conversation.MemoryOff.CONSENT: "Memory is off: you said no.",
    Conversation.MemoryOff.STOPPED: "This assistant no longer remembers you.",
}


# --- The stack: one parser, JSON out, the errors of the API -----------------------------------


class EmbedJSONParser(BaseParser):
    """A body read as JSON whatever its content type says (the chat always read it so): at most the
    website chat's body size (413 `request_too_large`), a JSON object (400 `invalid_json`)."""

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = max_body_bytes(EMBED)
        body = stream.read(limit + 1) if stream is not None else b""
        if len(body) > limit:
            raise AppError("request_too_large", f"A request body is at most {limit} bytes.")
        try:
            data = json.loads(body or b"{}")
        except (ValueError, UnicodeDecodeError):
            raise exceptions.ParseError("The request body must be JSON.") from None
        if not isinstance(data, dict):
            raise exceptions.ParseError("The request body must be a JSON object.")
        return data


class JSONOnly(BaseContentNegotiation):
    """Every answer is JSON, whatever the request's Accept says (the script on any page reads it)."""

    def select_parser(self, request, parsers):
        return parsers[0]

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class EmbedApi(APIView):
    """What every website chat endpoint shares. Subclasses name their authentication and their
    throttles; OPTIONS answers 204 (a preflight is answered before the view: `surfaces.http.cors`)."""

    authentication_classes: list = []
    permission_classes: list = []
    throttle_classes: tuple = ()
    parser_classes = [EmbedJSONParser]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = JSONOnly
    schema = None  # the website chat is not part of the REST API's OpenAPI document
    http_method_names = ["get", "post", "options"]  # HEAD is not a GET here: 405, as it always was

    def initial(self, request, *args, **kwargs):
        """The method first, as the website chat always checked it: OPTIONS is answered 204 and a
        wrong method 405 before anybody is looked up or counted; then DRF's authentication (who is
        asking), the body's fields (`read_body`) and the throttles (the limits, in order)."""
        if request.method == "OPTIONS":
            return
        if request.method.lower() not in self.http_method_names or not hasattr(self, request.method.lower()):
            self.http_method_not_allowed(request, *args, **kwargs)
        super().initial(request, *args, **kwargs)

    def options(self, request, *args, **kwargs):
        return Response(status=204)

    def http_method_not_allowed(self, request, *args, **kwargs):
        method = next(m for m in self.allowed_methods if m != "OPTIONS")
        raise AppError("method_not_allowed", f"Use {method}.", status=405)

    def read_body(self, data: dict) -> dict:
        """The body's fields this endpoint takes, checked (400 naming the field); none by default."""
        return {}

    def check_throttles(self, request):
        """The body's fields, then each limit in order: a malformed request is refused before it is
        counted, and the first limit passed refuses without counting the ones after it (DRF's own
        check would count them all)."""
        self.body = self.read_body(request.data)
        for throttle in self.get_throttles():
            if not throttle.allow_request(request, self):
                raise throttle.refused

    def handle_exception(self, exc):
        try:
            return super().handle_exception(exc)
        except Exception:  # the chat on someone else's page still gets a readable answer
            log.exception("website chat endpoint failed")
            error = AppError("server_error", "Something went wrong on our side. Try again.", status=500)
            return super().handle_exception(error)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        response.setdefault("Cache-Control", "no-store")
        return response

    @property
    def caller(self) -> auth.EmbedCaller:
        """Who is asking, as the view's authentication found it."""
        caller = self.request.auth
        assert isinstance(caller, auth.EmbedCaller)
        return caller

    @property
    def identity(self) -> embed.Identity:
        """The person the body names (views whose authentication resolves one)."""
        assert self.caller.identity is not None
        return self.caller.identity

    @property
    def conversation(self) -> Conversation:
        """The conversation the token opens (views whose authentication checks one)."""
        assert self.caller.conversation is not None
        return self.caller.conversation


def _bool(data: dict, name: str, default: bool) -> bool:
    value = data.get(name, default)
    if not isinstance(value, bool):
        raise AppError("invalid_request", f"{name} must be true or false.", field=name)
    return value


# --- What the embed draws -------------------------------------------------------------------


def agent_public(agent: Agent) -> dict:
    """What any chat surface shows about an agent's memory: the notice (R27), its line, the switch
    and ask-first settings. `available` is false when memory is off or the plan has none."""
    settings = AgentVersion.objects.published(agent).config["memorySettings"]
    available = settings["on"] and agent.team.has_memory
    notice = ""
    if available:
        # The privacy link is drawn as a link beside the text, so it is left out of the text here.
        notice = notice_text({**settings, "privacyUrl": ""}, agent_name=agent.name)
    return {
        "id": agent.public_id,
        "name": agent.name,
        "memory": {
            "available": available,
            "showSwitch": available and settings["showSwitch"],
            "askFirst": available and settings["askFirst"],
            "notice": notice,
            "line": NOTICE_LINE if available else "",
            "privacyUrl": settings["privacyUrl"] if available else "",
            "askFirstQuestion": ASK_FIRST_QUESTION,
        },
    }


def _end_user_state(end_user) -> dict:
    return {
        "memory": end_user_memory_state(end_user),
        "consent": consent_state(end_user),
    }


def _conversation_state(conversation: Conversation, end_user_state: dict) -> dict:
    settings = conversation.version.config["memorySettings"]
    if end_user_state["memory"]["stopped"]:
        line = OFF_LINES[Conversation.MemoryOff.STOPPED]
    elif conversation.uses_memory:
        line = NOTICE_LINE
    else:
        line = OFF_LINES.get(conversation.memory_off_reason, "")
    return {
        "id": conversation.public_id,
        "token": embed.conversation_token(conversation),
        "startedAt": conversation.started_at.isoformat(),
        "memory": {
            "used": conversation.uses_memory and not end_user_state["memory"]["stopped"],
            "reason": conversation.memory_off_reason,
            "line": line,
            # The switch can turn memory off for this chat while it is on; back on only in a new chat.
            "switchable": settings["showSwitch"]
            and conversation.uses_memory
            and not end_user_state["memory"]["stopped"],
        },
        "hasMessages": conversation.messages.exists(),
    }


def _message(message: Message) -> dict:
    return {
        "role": "user" if message.kind == Message.Kind.USER else "agent",
        "text": message.text,
        "at": message.created_at.isoformat(),
    }


# --- Endpoints ------------------------------------------------------------------------------


def script(request):
    """/embed/v1.js: the website chat, one file, no framework (CORS-open like every /embed/ path)."""
    path = finders.find("embed/v1.js")
    if not path:
        raise Http404("embed/v1.js is missing")
    response = FileResponse(open(path, "rb"), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=300"
    return response


class AgentConfigApi(EmbedApi):
    authentication_classes = [auth.AgentAuthentication]
    throttle_classes = (throttles.IpRequests, throttles.AgentRequests)

    def get(self, request, agent_id: str):
        return Response({"agent": agent_public(self.caller.agent)})


class ChatStartApi(EmbedApi):
    """Identify the visitor (issuing or replacing their signed id) and start a chat on the published
    version. With askFirst and no answer yet, no chat starts: the reply says to ask."""

    authentication_classes = [auth.VisitorAuthentication]
    throttle_classes = throttles.PERSON_REQUESTS

    def read_body(self, data: dict) -> dict:
        return {"memory": _bool(data, "memory", True), "switch_on": _bool(data, "switch", True)}

    def post(self, request, agent_id: str):
        agent, identity = self.caller.agent, self.identity
        started = embed.embed_chat_start(agent=agent, external_id=identity.external_id, **self.body)
        end_user_state = _end_user_state(started.end_user)
        conversation = started.conversation
        return Response(
            {
                "visitorId": identity.visitor_id,
                "visitorIdReplaced": identity.replaced,
                "agent": agent_public(agent),
                "endUser": end_user_state,
                "ask": started.ask,  # askFirst: a yes or no before the first message (R26)
                "conversation": _conversation_state(conversation, end_user_state) if conversation else None,
            }
        )


class ConsentAnswerApi(EmbedApi):
    """A yes or no: the chat's ask-first question (`chat_prompt`) or the site's own step through
    `AgentNava.memory.set` (`site_step`). It applies from the next chat."""

    authentication_classes = [auth.VisitorAuthentication]
    throttle_classes = throttles.PERSON_REQUESTS

    def read_body(self, data: dict) -> dict:
        agreed = data.get("agreed")
        if not isinstance(agreed, bool):
            raise AppError("invalid_request", "agreed must be true or false.", field="agreed")
        source = data.get("source", "chat_prompt")
        if source not in CONSENT_SOURCES:
            raise AppError("invalid_source", "source must be chat_prompt or site_step.", field="source")
        return {"agreed": agreed, "source": source}

    def post(self, request, agent_id: str):
        identity = self.identity
        end_user = end_user_get_or_create(agent=self.caller.agent, external_id=identity.external_id)
        consent = consent_record(end_user=end_user, **self.body)
        return Response(
            {
                "visitorId": identity.visitor_id,
                "visitorIdReplaced": identity.replaced,
                "consent": consent,
                "endUser": _end_user_state(end_user),
            }
        )


class TranscriptApi(EmbedApi):
    """Resume a chat after a reload: only for the visitor (or site user) who started it."""

    authentication_classes = [auth.ConversationVisitorAuthentication]
    throttle_classes = throttles.PERSON_REQUESTS

    def post(self, request, conversation_id: str):
        conversation = self.conversation
        end_user_state = _end_user_state(conversation.end_user)
        messages = conversation.messages.filter(kind__in=[Message.Kind.USER, Message.Kind.AGENT]).order_by(
            "-created_at", "-id"
        )
        return Response(
            {
                "agent": agent_public(conversation.agent),
                "endUser": end_user_state,
                "conversation": _conversation_state(conversation, end_user_state),
                "messages": [_message(m) for m in reversed(messages[:TRANSCRIPT_MESSAGES])],
            }
        )


class MessageSendApi(EmbedApi):
    """The person's message and the agent's reply, or, when refused (size, rate, model down),
    nothing at all: the conversation stays as it was."""

    authentication_classes = [auth.ConversationTokenAuthentication]
    throttle_classes = throttles.MESSAGES

    def read_body(self, data: dict) -> dict:
        return {"text": validate_message_text(data.get("text"))}

    def post(self, request, conversation_id: str):
        conversation = self.conversation
        turn = conversation_send(conversation=conversation, text=self.body["text"])
        conversation.refresh_from_db()
        end_user_state = _end_user_state(conversation.end_user)
        return Response(
            {
                "message": _message(turn.message),
                "reply": _message(turn.reply),
                "handledAsRequest": turn.handled_as_request,
                "conversation": _conversation_state(conversation, end_user_state),
                "endUser": end_user_state,
            }
        )


class MemorySwitchApi(EmbedApi):
    """The visitor's switch: {"on": false} turns memory off for the rest of this chat."""

    authentication_classes = [auth.ConversationTokenAuthentication]
    throttle_classes = (throttles.IpRequests, throttles.VisitorRequests)

    def read_body(self, data: dict) -> dict:
        if data.get("on") is not False:
            raise AppError(
                "switch_on_next_chat", "Memory can only be turned back on in a new chat: use Start over.", field="on"
            )
        return {}

    def post(self, request, conversation_id: str):
        conversation = embed.conversation_memory_switch_off(conversation=self.conversation)
        end_user_state = _end_user_state(conversation.end_user)
        return Response({"conversation": _conversation_state(conversation, end_user_state), "endUser": end_user_state})


class NotFoundApi(EmbedApi):
    """Any other path under /embed/: the website chat's JSON 404, readable by the script on any site."""

    def initial(self, request, *args, **kwargs):
        if request.method != "OPTIONS":
            raise NotFound("not_found", "No such path.")
