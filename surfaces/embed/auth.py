"""Who a website chat request speaks for, as DRF authentication classes.

Nobody signs in: the caller is an agent's chat on someone's page, named by the agent's id in the
path and, in the JSON body, a signed visitor id or a site user's id and hash
(`surfaces.embed.services.identity_resolve`), or a conversation's token. The answer is an
`EmbedCaller` in `request.auth`; `request.user` stays whoever the session says (nobody, on a
customer's site). A refusal is the website chat's own error (404 `agent_not_found` or
`conversation_not_found`, 403 `invalid_end_user_hash`), never DRF's 401 or 403.

The body is read first, so a body that is not JSON is refused as such before anything is looked up.
"""

from dataclasses import dataclass

from rest_framework.authentication import BaseAuthentication

from agents.errors import NotFound
from agents.models import Agent, Conversation
from surfaces.embed import services as embed


@dataclass(frozen=True)
class EmbedCaller:
    agent: Agent
    identity: embed.Identity | None = None  # the person the body names (a visitor or a site's user)
    conversation: Conversation | None = None  # the conversation whose token the body holds

    @property
    def external_id(self) -> str:
        """The person's end-user id: the one the body names, else the conversation's."""
        if self.identity is not None:
            return self.identity.external_id
        assert self.conversation is not None
        return self.conversation.end_user.external_id

    @property
    def fresh(self) -> bool:
        """Whether this request was given a new visitor id (new ids are limited per address)."""
        return self.identity is not None and self.identity.fresh


def _body(request) -> dict:
    return request.data  # the embed's parser answers a JSON object, or refuses


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


def _session_user(request):
    return getattr(request._request, "user", None)


class AgentAuthentication(BaseAuthentication):
    """The agent in the path (`agent_id`), for what anybody may read of it (its config)."""

    def authenticate(self, request):
        agent = _agent(request.parser_context["kwargs"]["agent_id"])
        return _session_user(request), EmbedCaller(agent=agent)


class VisitorAuthentication(BaseAuthentication):
    """The agent in the path and the person the body names: a signed visitor id (a fresh one when
    it does not verify) or a site user's id with its hash (403 when the hash does not match)."""

    def authenticate(self, request):
        data = _body(request)
        agent = _agent(request.parser_context["kwargs"]["agent_id"])
        return _session_user(request), EmbedCaller(agent=agent, identity=_identity(agent, data))


class ConversationTokenAuthentication(BaseAuthentication):
    """The conversation in the path (`conversation_id`) with its token from the body; a wrong token
    is not found, exactly like a missing conversation."""

    def caller(self, request, conversation: Conversation, data: dict) -> EmbedCaller:
        return EmbedCaller(agent=conversation.agent, conversation=conversation)

    def authenticate(self, request):
        data = _body(request)
        conversation_id = request.parser_context["kwargs"]["conversation_id"]
        conversation = embed.conversation_for_token(conversation_id, data.get("token"))
        return _session_user(request), self.caller(request, conversation, data)


class ConversationVisitorAuthentication(ConversationTokenAuthentication):
    """A conversation's token, and the person who started it: resuming a chat after a reload is
    only for the same visitor (or site user); anybody else finds no such conversation."""

    def caller(self, request, conversation: Conversation, data: dict) -> EmbedCaller:
        identity = _identity(conversation.agent, data)
        if identity.fresh or identity.external_id != conversation.end_user.external_id:
            raise NotFound("conversation_not_found", "No such conversation.")
        return EmbedCaller(agent=conversation.agent, identity=identity, conversation=conversation)
