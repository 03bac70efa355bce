"""A chat turn: the person's message, then the agent's reply through the model engine.

The web chat, the website embed and the API all send messages through `conversation_send`.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from agents.engines import get_engine
from agents.errors import AppError
from agents.models import Conversation, Message
from agents.services import usage_count_reply
from memory.store.end_user_requests import end_user_request
from surfaces.chat.record import message_record

MAX_MESSAGE_CHARS = 4000
HISTORY_MESSAGES = 20


@dataclass(frozen=True)
class ChatTurn:
    message: Message  # the person's
    reply: Message  # the agent's
    handled_as_request: bool  # an end-user memory request ("stop remembering me", "forget ...")


NO_MEMORY = (
    "This chat does not use memory: nothing remembered about this person is available here, and nothing "
    "from this chat is kept. If they ask what you remember about them, say that this chat does not use memory."
)


def system_prompt(conversation: Conversation) -> str:
    """The agent's instructions and guardrails, then the memory note when memory is used (R17),
    kept in step with the memory (memory.store.rows rewrites it), or, in a chat that does not use
    memory, that it does not (so no agent claims to remember in one)."""
    config = conversation.version.config
    parts = [config.get("instructions", "")]
    if config.get("guardrails"):
        parts.append("Guardrails:\n" + config["guardrails"])
    if conversation.uses_memory and conversation.memory_note:
        parts.append(conversation.memory_note)
    elif not conversation.uses_memory:
        parts.append(NO_MEMORY)
    return "\n\n".join(part for part in parts if part)


def validate_message_text(text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise AppError("invalid_message", "A message needs some text.", field="text")
    if len(text) > MAX_MESSAGE_CHARS:
        raise AppError("message_too_long", f"A message is at most {MAX_MESSAGE_CHARS} characters.", field="text")
    return text.strip()


def conversation_send(*, conversation: Conversation, text: str, now: datetime | None = None) -> ChatTurn:
    """Record the person's message and the agent's reply, or nothing at all.

    An end-user memory request (R22) is answered before any model is asked, whether or not the
    conversation uses memory. Otherwise the engine replies; if it fails, nothing is recorded and
    the error is raised (EngineError, HTTP 502), so the conversation stays as it was."""
    text = validate_message_text(text)
    now = now or timezone.now()
    request_reply = end_user_request(conversation, text, now=now)
    if request_reply is not None:
        with transaction.atomic():
            message = message_record(conversation=conversation, kind=Message.Kind.USER, text=text, now=now)
            reply = message_record(conversation=conversation, kind=Message.Kind.AGENT, text=request_reply, now=now)
        return ChatTurn(message, reply, True)
    history = [
        {"role": "user" if m.kind == Message.Kind.USER else "assistant", "content": m.text}
        for m in reversed(
            conversation.messages.filter(kind__in=[Message.Kind.USER, Message.Kind.AGENT]).order_by(
                "-created_at", "-id"
            )[:HISTORY_MESSAGES]
        )
    ]
    history.append({"role": "user", "content": text})
    result = get_engine().reply(task="chat_reply", system=system_prompt(conversation), messages=history)
    with transaction.atomic():
        message = message_record(conversation=conversation, kind=Message.Kind.USER, text=text, now=now)
        reply = message_record(conversation=conversation, kind=Message.Kind.AGENT, text=result.data, now=now)
        usage_count_reply(team=conversation.agent.team, tokens=result.input_tokens + result.output_tokens, now=now)
    return ChatTurn(message, reply, False)
