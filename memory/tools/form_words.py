"""The words a person sees for a refused setting, in the form's own terms (the API keeps its
field names and messages: `memory.store.settings` is the one validator; this is only how the Memory
tab's form and the Builder say it). Vocabulary as data: one row per setting."""

import re

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


# How people name each setting in plain words, so a request about a setting is never read as a thing
# for memory to keep or leave out ("keep days to 0", "forget about quiet minutes"): the form's field,
# then the words that name it (regular expressions, matched on the phrase, case-insensitive).
SETTING_NAMES = {
    "keepForDays": (
        r"\bkeep\s*(?:for\s*)?days?\b",
        r"\bdays?\s+(?:to\s+keep|kept)\b",
        r"\bretention\b",
        r"^(?:the\s+)?days?$",
        r"\bdays?\s*(?:to|=|:)\s*-?\d",
    ),
    "quietMinutes": (
        r"\bquiet\s*(?:minutes?|mins?|time|window|period|for)\b",
        r"^(?:the\s+)?quiet\b",
        r"\bminutes?\s*(?:to|=|:)\s*-?\d",
    ),
    "askFirst": (r"\bask(?:ing)?\s*first\b", r"\bconsent\s+(?:question|step|prompt)\b"),
    "showSwitch": (r"^(?:the\s+)?(?:memory\s+|end[\s-]users?'?\s+)?(?:switch|toggle)\b",),
    "privacyUrl": (r"\bprivacy\s*(?:policy|url|link|page|address)\b",),
    "on": (r"^(?:the\s+)?memory(?:\s+(?:setting|switch|on|off))?$",),
}

# What each setting can be, said the way the form says it.
SETTING_RANGE_WORDS = {
    "keepForDays": f"Keep for is a whole number of days from {KEEP_FOR_DAYS_MIN} to {KEEP_FOR_DAYS_MAX}, "
    "e.g. \u201ckeep memories for 90 days\u201d.",
    "quietMinutes": f"Quiet for is {_QUIET} minutes, e.g. \u201cquiet for 15 minutes\u201d.",
    "askFirst": "Ask first is on or off, e.g. \u201cask first\u201d or \u201cdon't ask first\u201d.",
    "showSwitch": "The switch for end users is shown or hidden, e.g. \u201cshow the switch\u201d.",
    "privacyUrl": "The privacy policy is a web address, e.g. \u201cprivacy policy https://example.com/privacy\u201d.",
    "on": "Memory is on or off, e.g. \u201cturn memory on\u201d.",
}

SETTING_FORM_LABELS = {
    "on": "Memory",
    "instructions": "Instructions",
    "keepForDays": "Keep for",
    "quietMinutes": "Quiet for",
    "showSwitch": "End users",
    "askFirst": "End users",
    "privacyUrl": "Privacy policy",
}


def setting_named_by(phrase: str) -> str | None:
    """The form field of the setting a phrase names ("quiet minutes" is quietMinutes), or None when
    it names none (then it is a thing memory may keep or leave out)."""
    for field, patterns in SETTING_NAMES.items():
        if any(re.search(pattern, phrase or "", re.I) for pattern in patterns):
            return field
    return None
