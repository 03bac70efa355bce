"""DRF authentication with a team API key: `Authorization: Bearer <key>`."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, throttling
from rest_framework.settings import api_settings

from agents.access import actor_for_key
from agents.services import api_key_authenticate
from surfaces.http import rate_counter


class ApiKeyPrincipal:
    """The caller of an API request: a team, through one of its keys, acting with the role of the
    key's maker (`actor`, an `agents.access.Actor`)."""

    is_authenticated = True
    is_anonymous = False

    def __init__(self, key):
        self.key = key
        self.team = key.team
        self.actor = actor_for_key(key)

    def __str__(self) -> str:
        return f"api key {self.key.prefix}"


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, raw = header.partition(" ")
        if scheme != self.keyword or not raw.strip():
            raise exceptions.AuthenticationFailed("Use the header Authorization: Bearer <API key>.")
        key = api_key_authenticate(raw_key=raw.strip())
        if key is None:
            raise exceptions.AuthenticationFailed("This API key is not valid or has been revoked.")
        return ApiKeyPrincipal(key), key

    def authenticate_header(self, request):
        return self.keyword


class ApiKeyRateThrottle(throttling.SimpleRateThrottle):
    """At most the `api_key` rate (REST_FRAMEWORK DEFAULT_THROTTLE_RATES, from API_RATE_PER_KEY)
    per API key; past it, 429 `rate_limited` with Retry-After. Requests without a key are not
    counted here: they never get past authentication.

    The count is one atomic counter a key and window (`surfaces.http.rate_counter.hit`): in Redis when the
    default cache is Redis (exact across every thread and process), else per process under a lock
    (exact across its threads; each process then counts on its own). A window starts at the key's
    first request in it, so a burst is never split across two."""

    scope = "api_key"

    def get_rate(self):
        # Read at request time, not import time, so a changed setting applies (tests change it).
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view):
        if not isinstance(request.user, ApiKeyPrincipal):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.key.pk}

    def allow_request(self, request, view):
        self.rate = self.get_rate()
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        count, self.retry_after = rate_counter.hit(key, window_seconds=self.duration)
        return count <= self.num_requests

    def wait(self):
        return self.retry_after


class ApiKeyScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema documents the key: HTTP bearer."""

    target_class = "surfaces.api.auth.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A team API key (`python manage.py create_api_key --team SLUG`), sent as "
            "`Authorization: Bearer ank_...`. Every call sees only that team's agents.",
        }
