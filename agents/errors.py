"""The one application error type, and the error codes of this app with their status.

The surfaces render an AppError as {"error": {"code", "message", "field"?}}. Each app declares the
codes its errors carry and their status once, beside them (`AGENT_ERROR_CODES` here,
`memory.store.errors.MEMORY_ERROR_CODES`, `webhooks.errors.WEBHOOK_ERROR_CODES`);
`surfaces.http.errors` merges them by plain imports into the one table the API answers with and
documents.
"""

# code -> (status, when). The codes of teams, agents, versions, end users, conversations, messages
# and model engines that the API answers.
AGENT_ERROR_CODES: dict[str, tuple[int, str]] = {
    "invalid_config": (400, "The configuration change is refused (e.g. quietMinutes 7); nothing was published."),
    "invalid_end_user_id": (400, "endUserId must be 1 to 200 characters."),
    "end_user_id_not_normal": (
        400,
        "endUserId is not in its one normal form: Unicode NFC, no whitespace at the start or end, no control "
        "characters. It is never trimmed or changed for you (so a hash or a lookup is always of the id sent).",
    ),
    "invalid_message": (400, "A message needs some text."),
    "plan_required": (403, "Memory comes with the Team plan and up."),
    "admin_only": (
        403,
        "Only a team owner or admin can do this (API keys, webhook endpoints, members, deleting an agent, "
        "the team-wide erase, the audit log); a key acts with its maker's role in the team.",
    ),
    "agent_not_found": (404, "No agent with this id for this key's team (another team's agent answers the same)."),
    "conversation_not_found": (404, "No conversation with this id for this key's team."),
    "end_user_not_found": (
        404,
        "No end user with this endUserId on this agent (for the team-wide erase: on any agent of this key's team).",
    ),
    "message_too_long": (413, "A message is at most 4000 characters."),
    "model_error": (502, "The model could not give a usable answer; nothing was recorded."),
    "model_malformed": (502, "The model's answer was not the JSON asked for; nothing was recorded."),
    "model_timeout": (502, "The model did not answer in time; nothing was recorded."),
    "model_rate_limited": (502, "The model server is rate limited; nothing was recorded."),
    "model_unreachable": (502, "The model server could not be reached; nothing was recorded."),
    "model_refused": (502, "The model refused to answer; nothing was recorded."),
    "model_too_large": (502, "The model's answer was over MODEL_ANSWER_MAX_BYTES (64 KB); nothing was recorded."),
}


class AppError(Exception):
    """An error a person or a program can act on. Its status is the one its code has in this app's
    table; a code of another app gets its status where the surfaces answer (`surfaces.http.errors`),
    and `status=` is only for a code no table describes."""

    status = 400

    def __init__(self, code: str, message: str, *, status: int | None = None, field: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        if status is not None:
            self.status = status
        elif code in AGENT_ERROR_CODES:
            self.status = AGENT_ERROR_CODES[code][0]


class NotFound(AppError):
    status = 404


class InvalidConfig(AppError):
    """A configuration change that is refused; nothing was saved."""

    plain = False  # the message is already in plain words: the form and the Builder say it as it is

    def __init__(self, message: str, *, field: str | None = None, code: str = "invalid_config"):
        super().__init__(code, message, field=field)
