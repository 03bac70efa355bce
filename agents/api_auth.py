"""DRF authentication with a team API key: `Authorization: Bearer <key>`."""
from rest_framework import authentication, exceptions

from .services import api_key_authenticate


class ApiKeyPrincipal:
    """The caller of an API request: a team, through one of its keys."""

    is_authenticated = True
    is_anonymous = False

    def __init__(self, key):
        self.key = key
        self.team = key.team

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
