"""The OpenAPI schema's side of idempotency keys (surfaces.http.idempotency): every write operation
of an API class that takes them lists the `Idempotency-Key` header and the two answers only a key
can give (409 `idempotency_key_in_use`, 422 `idempotency_key_reused`), merged into the statuses the
operation already documents. The schema class of every API view (REST_FRAMEWORK's
DEFAULT_SCHEMA_CLASS); apart from the writes of `IdempotentWrites` views, it is drf-spectacular's own."""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

from surfaces.http.base import errors
from surfaces.http.idempotency import HEADER, KEY_PATTERN, WRITE_METHODS, IdempotentWrites

KEY_PARAMETER = OpenApiParameter(
    HEADER,
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    pattern=KEY_PATTERN,
    description="Makes this write safe to send again (after a dropped connection, a timeout or a 5xx): "
    "a key of yours, unique per request (a UUID, or your own operation's id), 1 to 255 visible ASCII "
    "characters. The same key with the same request within 24 hours answers the first answer again "
    "(status and body, with `Idempotent-Replayed: true`) without doing it again; with another request, "
    "422 `idempotency_key_reused`; while the first is still being answered, 409 `idempotency_key_in_use`. "
    "Keys are per team. A 5xx answer is not kept: the same key then runs again.",
)


class IdempotencySchema(AutoSchema):
    def _takes_keys(self) -> bool:
        return self.method in WRITE_METHODS and isinstance(self.view, IdempotentWrites)

    def get_override_parameters(self):
        parameters = super().get_override_parameters()
        return [*parameters, KEY_PARAMETER] if self._takes_keys() else parameters

    def _get_response_bodies(self, direction="response"):
        # The hook after @extend_schema's responses are read (its own subclass overrides
        # get_response_serializers, not this); _get_response_for_code renders an answer as the rest.
        bodies = super()._get_response_bodies(direction)
        if direction != "response" or not self._takes_keys():
            return bodies
        for status, answer in errors("idempotency_key_in_use", "idempotency_key_reused").items():
            if status not in (409, 422):
                continue  # the errors every call can answer: the operation lists them already
            code = str(status)
            rendered = self._get_response_for_code(answer, code, None, direction)
            existing = bodies.get(code)
            if existing is None:
                bodies[code] = rendered
                continue
            existing["description"] = f"{existing['description']}; {rendered['description']}"
            for media_type, content in rendered["content"].items():
                existing["content"].setdefault(media_type, content).setdefault("examples", {}).update(
                    content.get("examples", {})
                )
        return dict(sorted(bodies.items(), key=lambda item: item[0]))
