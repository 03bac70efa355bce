"""The website chat's public endpoints, used by /embed/v1.js from any site (R24-R27).

Thin views: each parses JSON, finds who is asking (a signed visitor id, a site user's id and
hash, or a conversation token), counts the request against the rate limits, then calls one
service. Errors have the API's shape, {"error": {"code", "message", "field"?}}. No cookies are
used, so the endpoints are CSRF-exempt and open to any origin (CORS `*`).

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
from functools import wraps

from django.contrib.staticfiles import finders
from django.http import FileResponse, Http404, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from agents.errors import AppError, NotFound
from agents.models import Agent, AgentVersion, Conversation, Message
from agents.services import end_user_get_or_create
from consent.notice import NOTICE_LINE, notice_text
from consent.selectors import consent_state
from consent.services import consent_record
from memory.store.end_user_requests import end_user_memory_state
from surfaces.chat.send import conversation_send, validate_message_text
from surfaces.embed import services as embed
from surfaces.http.boundary import embed_cors as _cors
from surfaces.http.errors import error_body

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 16 * 1024
TRANSCRIPT_MESSAGES = 50
ASK_FIRST_QUESTION = "Can this assistant remember details from our chats to help next time?"
CONSENT_SOURCES = ("chat_prompt", "site_step")

OFF_LINES: dict[str, str] = {
    Conversation.MemoryOff.REQUESTED: "Memory is off for this chat.",
    Conversation.MemoryOff.SWITCH: "Memory is off for this chat.",
    Conversation.MemoryOff.CONSENT: "Memory is off: you said no.",
    Conversation.MemoryOff.STOPPED: "This assistant no longer remembers you.",
}


def _error(exc: AppError) -> JsonResponse:
    response = JsonResponse(error_body(exc.code, exc.message, exc.field), status=exc.status)
    if isinstance(exc, embed.RateLimited):
        response["Retry-After"] = str(exc.retry_after)
    return response


def embed_endpoint(method: str):
    """CSRF-exempt, CORS-open, one method (plus the browser's OPTIONS preflight); an AppError
    becomes its JSON error with its status."""

    def decorate(view):
        @csrf_exempt
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if request.method == "OPTIONS":
                return _cors(HttpResponse(status=204))
            if request.method != method:
                return _cors(_error(AppError("method_not_allowed", f"Use {method}.", status=405)))
            try:
                return _cors(view(request, *args, **kwargs))
            except AppError as exc:
                return _cors(_error(exc))
            except Exception:  # the chat on someone else's page still gets a readable answer
                log.exception("website chat endpoint failed")
                return _cors(
                    _error(AppError("server_error", "Something went wrong on our side. Try again.", status=500))
                )

        return wrapper

    return decorate


def _json(request) -> dict:
    if len(request.body) > MAX_BODY_BYTES:
        raise AppError("request_too_large", f"A request body is at most {MAX_BODY_BYTES} bytes.", status=413)
    try:
        data = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise AppError("invalid_json", "The request body must be JSON.") from None
    if not isinstance(data, dict):
        raise AppError("invalid_json", "The request body must be a JSON object.")
    return data


def _bool(data: dict, name: str, default: bool) -> bool:
    value = data.get(name, default)
    if not isinstance(value, bool):
        raise AppError("invalid_request", f"{name} must be true or false.", field=name)
    return value


def _agent(agent_id: str) -> Agent:
    agent = Agent.objects.select_related("team").filter(public_id=agent_id).first()
    if agent is None:
        raise NotFound("agent_not_found", "No such agent.")
    return agent


def _identity(agent: Agent, data: dict) -> embed.Identity:
    return embed.identity_resolve(
        agent,
        visitor_id=data.get("visitorId"),
        end_user_id=data.get("endUserId"),
        end_user_hash_given=data.get("endUserHash"),
    )


def _address(request) -> str:
    return request.META.get("REMOTE_ADDR", "")


def _count_identity_request(request, agent: Agent, identity: embed.Identity) -> None:
    """Every request that names a visitor counts against its IP address, that visitor and the
    agent, in that order (a request refused by its address does not use the agent's share); a
    request that gets a fresh visitor id also counts against new ids per address, so ids cannot be
    farmed."""
    embed.rate_check("ip_requests", f"{agent.pk}:{_address(request)}")
    if identity.fresh:
        embed.rate_check("ip_new_visitors", f"{agent.pk}:{_address(request)}")
    embed.rate_check("visitor_requests", f"{agent.pk}:{identity.external_id}")
    embed.rate_check("agent_requests", str(agent.pk))


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
    """/embed/v1.js: the website chat, one file, no framework."""
    path = finders.find("embed/v1.js")
    if not path:
        raise Http404("embed/v1.js is missing")
    response = FileResponse(open(path, "rb"), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=300"
    response["Access-Control-Allow-Origin"] = "*"
    return response


@embed_endpoint("GET")
def agent_config(request, agent_id: str):
    agent = _agent(agent_id)
    embed.rate_check("ip_requests", f"{agent.pk}:{_address(request)}")
    embed.rate_check("agent_requests", str(agent.pk))
    return JsonResponse({"agent": agent_public(agent)})


@embed_endpoint("POST")
def chat_start(request, agent_id: str):
    """Identify the visitor (issuing or replacing their signed id) and start a chat on the
    published version. With askFirst and no answer yet, no chat starts: the reply says to ask."""
    data = _json(request)
    agent = _agent(agent_id)
    memory = _bool(data, "memory", True)
    switch_on = _bool(data, "switch", True)
    identity = _identity(agent, data)
    _count_identity_request(request, agent, identity)
    started = embed.embed_chat_start(agent=agent, external_id=identity.external_id, memory=memory, switch_on=switch_on)
    end_user_state = _end_user_state(started.end_user)
    return JsonResponse(
        {
            "visitorId": identity.visitor_id,
            "visitorIdReplaced": identity.replaced,
            "agent": agent_public(agent),
            "endUser": end_user_state,
            "ask": started.ask,  # askFirst: a yes or no before the first message (R26)
            "conversation": _conversation_state(started.conversation, end_user_state) if started.conversation else None,
        }
    )


@embed_endpoint("POST")
def consent_answer(request, agent_id: str):
    """A yes or no: the chat's ask-first question (`chat_prompt`) or the site's own step through
    `AgentNava.memory.set` (`site_step`). It applies from the next chat."""
    data = _json(request)
    agent = _agent(agent_id)
    agreed = data.get("agreed")
    if not isinstance(agreed, bool):
        raise AppError("invalid_request", "agreed must be true or false.", field="agreed")
    source = data.get("source", "chat_prompt")
    if source not in CONSENT_SOURCES:
        raise AppError("invalid_source", "source must be chat_prompt or site_step.", field="source")
    identity = _identity(agent, data)
    _count_identity_request(request, agent, identity)
    end_user = end_user_get_or_create(agent=agent, external_id=identity.external_id)
    consent = consent_record(end_user=end_user, agreed=agreed, source=source)
    return JsonResponse(
        {
            "visitorId": identity.visitor_id,
            "visitorIdReplaced": identity.replaced,
            "consent": consent,
            "endUser": _end_user_state(end_user),
        }
    )


@embed_endpoint("POST")
def transcript(request, conversation_id: str):
    """Resume a chat after a reload: only for the visitor (or site user) who started it."""
    data = _json(request)
    conversation = embed.conversation_for_token(conversation_id, data.get("token"))
    identity = _identity(conversation.agent, data)
    if identity.fresh or identity.external_id != conversation.end_user.external_id:
        raise NotFound("conversation_not_found", "No such conversation.")
    _count_identity_request(request, conversation.agent, identity)
    end_user_state = _end_user_state(conversation.end_user)
    messages = conversation.messages.filter(kind__in=[Message.Kind.USER, Message.Kind.AGENT]).order_by(
        "-created_at", "-id"
    )
    return JsonResponse(
        {
            "agent": agent_public(conversation.agent),
            "endUser": end_user_state,
            "conversation": _conversation_state(conversation, end_user_state),
            "messages": [_message(m) for m in reversed(messages[:TRANSCRIPT_MESSAGES])],
        }
    )


@embed_endpoint("POST")
def message_send(request, conversation_id: str):
    """The person's message and the agent's reply, or, when refused (size, rate, model down),
    nothing at all: the conversation stays as it was."""
    data = _json(request)
    conversation = embed.conversation_for_token(conversation_id, data.get("token"))
    text = validate_message_text(data.get("text"))
    agent = conversation.agent
    embed.rate_check("ip_messages", f"{agent.pk}:{_address(request)}")
    embed.rate_check("visitor_messages", f"{agent.pk}:{conversation.end_user.external_id}")
    embed.rate_check("agent_messages", str(agent.pk))
    turn = conversation_send(conversation=conversation, text=text)
    conversation.refresh_from_db()
    end_user_state = _end_user_state(conversation.end_user)
    return JsonResponse(
        {
            "message": _message(turn.message),
            "reply": _message(turn.reply),
            "handledAsRequest": turn.handled_as_request,
            "conversation": _conversation_state(conversation, end_user_state),
            "endUser": end_user_state,
        }
    )


@embed_endpoint("POST")
def memory_switch(request, conversation_id: str):
    """The visitor's switch: {"on": false} turns memory off for the rest of this chat."""
    data = _json(request)
    conversation = embed.conversation_for_token(conversation_id, data.get("token"))
    if data.get("on") is not False:
        raise AppError(
            "switch_on_next_chat", "Memory can only be turned back on in a new chat: use Start over.", field="on"
        )
    embed.rate_check("ip_requests", f"{conversation.agent_id}:{_address(request)}")
    embed.rate_check("visitor_requests", f"{conversation.agent_id}:{conversation.end_user.external_id}")
    conversation = embed.conversation_memory_switch_off(conversation=conversation)
    end_user_state = _end_user_state(conversation.end_user)
    return JsonResponse({"conversation": _conversation_state(conversation, end_user_state), "endUser": end_user_state})


@csrf_exempt
def not_found(request, rest=""):
    """Any other path under /embed/: the embed's JSON 404, readable by the script on any site."""
    if request.method == "OPTIONS":
        return _cors(HttpResponse(status=204))
    return _cors(_error(NotFound("not_found", "No such path.")))
