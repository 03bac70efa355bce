"""The error codes the webhooks API answers, with their status and when: added to the API's one
list (`surfaces.http.errors.error_codes()`) through `agents.ports.add_error_codes` in
`WebhooksConfig.ready`."""

WEBHOOK_ERROR_CODES: dict[str, tuple[int, str]] = {
    "invalid_webhook": (
        400,
        "The webhook endpoint is refused: its url must be https to a host that resolves only to globally "
        "routable addresses (the field is url, the message says why), its events known; a team has at most 20.",
    ),
    "webhook_not_found": (404, "No webhook endpoint with this id for this key's team."),
}
