"""The words a person sees for a refused setting, in the form's own terms (the API keeps its
field names and messages: `memory.store.settings` is the one validator; this is only how the Memory
tab's form and the Builder say it). Vocabulary as data: one row per setting."""

from agents.errors import AppError
from memory.store.settings import KEEP_FOR_DAYS_MAX, KEEP_FOR_DAYS_MIN, MAX_INSTRUCTIONS_CHARS, QUIET_MINUTES_CHOICES

_QUIET = ", ".join(str(q) for q in QUIET_MINUTES_CHOICES[:-1]) + f" or {QUIET_MINUTES_CHOICES[-1]}"

# API field -> (the form's field name, what to say when it is refused)
MEMORY_FIELD_WORDS = {
    "memorySettings.on": ("on", None),  # plan_required: its message is already plain
    "memorySettings.instructions": (
        "instructions",
        f"Instructions can be at most {MAX_INSTRUCTIONS_CHARS} characters.",
    ),
    "memorySettings.keepForDays": (
        "keepForDays",
        f"Keep for: give a whole number of days from {KEEP_FOR_DAYS_MIN} to {KEEP_FOR_DAYS_MAX}.",
    ),
    "memorySettings.quietMinutes": ("quietMinutes", f"Quiet for: choose {_QUIET} minutes."),
    "memorySettings.showSwitch": ("showSwitch", "The switch setting is either on or off."),
    "memorySettings.askFirst": ("askFirst", "Ask first is either on or off."),
    "memorySettings.privacyUrl": (
        "privacyUrl",
        "Privacy policy: give a web address that starts with https:// or http:// (at most 500 characters), or leave it empty.",
    ),
}


def plain_error(exc: AppError) -> tuple[str, str]:
    """(the form field the error belongs to, or "", the sentence to show beside it)."""
    field = getattr(exc, "field", None) or ""
    form_field, words = MEMORY_FIELD_WORDS.get(field, ("", None))
    if getattr(exc, "plain", False):
        return form_field, exc.message
    return form_field, words or exc.message
