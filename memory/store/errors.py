"""The error codes of the memory app, with their status and when: merged into the API's one table
by `surfaces.http.errors` (a plain import)."""

MEMORY_ERROR_CODES: dict[str, tuple[int, str]] = {
    "memory_refused": (
        400,
        "The memory text holds a password, key, card or government id number, a line over 300 characters, or more than 30 lines; nothing changed.",
    ),
    "job_not_found": (404, "No Try or Apply job with this id on this agent."),
    "job_running": (409, "A Try (or an Apply) is already running for this agent: wait for it, or cancel it."),
    "memory_off": (
        409,
        "Memory is off in this agent's published version (or was never on): turn it on before setting a memory. "
        "Delete, stop and erase still work.",
    ),
    "memory_changed": (
        412,
        "The memory no longer reads the version named in If-Match (it changed since that read); nothing changed.",
    ),
    "memory_stopped": (
        409,
        "This end user asked to stop being remembered; resume with stop(false) before setting a memory.",
    ),
}
