"""The website chat's rate limits as DRF throttles, one class a scope of
`surfaces.embed.services.rate_limits()`, each counting one atomic counter a key and window
(`surfaces.http.rate_counter.hit`, the API key throttle's counter).

A view lists its scopes in order, address first: they are counted one by one and the first past its
limit refuses the request (429 `rate_limited`, its own message and `Retry-After`), so a request an
address is refused for never uses the visitor's or the agent's share (`EmbedApi.check_throttles`).
The keys are hashed: an address or a visitor id is never a cache key as it is.
"""

import hashlib
import math

from rest_framework import exceptions
from rest_framework.throttling import BaseThrottle

from surfaces.embed.services import RATE_MESSAGES, rate_limits
from surfaces.http import rate_counter


class RateLimited(exceptions.Throttled):
    """A refusal in the website chat's words: which limit, how many a window, and when to try again
    (`Retry-After`, from `wait`)."""

    def __init__(self, scope: str, limit: int, window: int, retry_after: int):
        per = "a minute" if window == 60 else f"in {window} seconds"
        seconds = f"{retry_after} second{'s' if retry_after != 1 else ''}"
        super().__init__(detail=f"{RATE_MESSAGES[scope]}: at most {limit} {per}. Try again in {seconds}.")
        self.wait = retry_after


class EmbedThrottle(BaseThrottle):
    """One scope of the limits, counted per address, per person (a visitor or a site's user) or per
    agent of the caller `request.auth` (`surfaces.embed.auth.EmbedCaller`)."""

    scope = ""
    per = "agent"  # "address", "person" or "agent"
    fresh_only = False  # counted only for a request that was given a fresh visitor id
    refused: RateLimited | None = None

    def key(self, request, caller) -> str | None:
        if self.fresh_only and not caller.fresh:
            return None
        if self.per == "address":
            return f"{caller.agent.pk}:{request.META.get('REMOTE_ADDR', '')}"
        if self.per == "person":
            return f"{caller.agent.pk}:{caller.external_id}"
        return str(caller.agent.pk)

    def allow_request(self, request, view) -> bool:
        key = self.key(request, request.auth)
        if key is None:
            return True
        limit, window = rate_limits()[self.scope]
        counter = f"embed-rate:{self.scope}:{hashlib.sha256(key.encode()).hexdigest()[:32]}"
        count, seconds_left = rate_counter.hit(counter, window_seconds=window)
        if count <= limit:
            return True
        self.refused = RateLimited(self.scope, limit, window, max(1, math.ceil(seconds_left)))
        return False

    def wait(self) -> float | None:
        return self.refused.wait if self.refused else None


class IpRequests(EmbedThrottle):
    scope, per = "ip_requests", "address"


class IpNewVisitors(EmbedThrottle):
    scope, per, fresh_only = "ip_new_visitors", "address", True


class VisitorRequests(EmbedThrottle):
    scope, per = "visitor_requests", "person"


class AgentRequests(EmbedThrottle):
    scope, per = "agent_requests", "agent"


class IpMessages(EmbedThrottle):
    scope, per = "ip_messages", "address"


class VisitorMessages(EmbedThrottle):
    scope, per = "visitor_messages", "person"


class AgentMessages(EmbedThrottle):
    scope, per = "agent_messages", "agent"


# Every request that names a person counts against its address (and, with a fresh visitor id, the
# new ids of that address, so ids cannot be farmed), that person and the agent, in that order.
PERSON_REQUESTS = (IpRequests, IpNewVisitors, VisitorRequests, AgentRequests)
MESSAGES = (IpMessages, VisitorMessages, AgentMessages)
