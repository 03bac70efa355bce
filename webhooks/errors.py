"""The error codes of the webhooks app, with their status and when: merged into the API's one
table by `surfaces.http.errors` (a plain import)."""

WEBHOOK_ERROR_CODES: dict[str, tuple[int, str]] = {
    "invalid_webhook": (
        400,
        "The webhook endpoint is refused: its url must be https to a host that resolves only to globally "
        "routable addresses (the field is url, the message says why), its events known; a team has at most 20.",
    ),
    "webhook_not_found": (404, "No webhook endpoint with this id for this key's team."),
}
