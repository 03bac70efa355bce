"""An agent's memory settings (`memorySettings` in its configuration): their shape, their
defaults, the one validator every path uses, and how a change reads.

`agents.agent_config` validates the whole configuration, and this module is its `memorySettings`
section (named in `settings.AGENTNAVA_CONFIG_SECTIONS`): the web form, the Memory tab, the Builder
and the API all refuse invalid settings (quietMinutes 7, keepForDays 0, a privacyUrl that is not
http(s), instructions holding a secret) with the same message. The API's fields read the limits
below by a plain import.
"""

import unicodedata
from typing import Any
from urllib.parse import urlparse

from agents.agent_config import checked_bool, checked_int, checked_text
from agents.errors import InvalidConfig
from memory.guards import instructions_refusal

QUIET_MINUTES_CHOICES = (5, 15, 30, 60)
KEEP_FOR_DAYS_MIN, KEEP_FOR_DAYS_MAX = 1, 3650
MAX_INSTRUCTIONS_CHARS = 4000
MAX_PRIVACY_URL_CHARS = 500

DEFAULT_MEMORY_SETTINGS: dict[str, Any] = {
    "on": False,
    "instructions": "",
    "keepForDays": 90,
    "quietMinutes": 30,
    "showSwitch": True,
    "askFirst": False,
    "privacyUrl": "",
}

MEMORY_SETTINGS_LABELS = {
    "on": "memory",
    "instructions": "memory instructions",
    "keepForDays": "keep for days",
    "quietMinutes": "quiet minutes",
    "showSwitch": "show switch",
    "askFirst": "ask first",
    "privacyUrl": "privacy URL",
}


def default() -> dict[str, Any]:
    return dict(DEFAULT_MEMORY_SETTINGS)


def validate(settings: Any) -> dict[str, Any]:
    """Return complete, normalised memory settings, or raise InvalidConfig naming the field.
    Memory instructions pass the same guards as a memory line (no secrets)."""
    if not isinstance(settings, dict):
        raise InvalidConfig("memorySettings must be an object.", field="memorySettings")
    unknown = sorted(set(settings) - set(DEFAULT_MEMORY_SETTINGS))
    if unknown:
        raise InvalidConfig(f"Unknown memory setting: {', '.join(unknown)}.", field=f"memorySettings.{unknown[0]}")
    merged = {**DEFAULT_MEMORY_SETTINGS, **settings}
    out: dict[str, Any] = {}
    out["on"] = checked_bool(merged["on"], "memorySettings.on")
    out["instructions"] = checked_text(merged["instructions"], "memorySettings.instructions", MAX_INSTRUCTIONS_CHARS)
    refusal = instructions_refusal(out["instructions"])
    if refusal:
        refused = InvalidConfig(refusal, field="memorySettings.instructions")
        refused.plain = True  # already in plain words: the form and the Builder say it as it is
        raise refused
    keep = checked_int(merged["keepForDays"], "memorySettings.keepForDays")
    if not KEEP_FOR_DAYS_MIN <= keep <= KEEP_FOR_DAYS_MAX:
        raise InvalidConfig(
            f"keepForDays must be between {KEEP_FOR_DAYS_MIN} and {KEEP_FOR_DAYS_MAX} days.",
            field="memorySettings.keepForDays",
        )
    out["keepForDays"] = keep
    quiet = checked_int(merged["quietMinutes"], "memorySettings.quietMinutes")
    if quiet not in QUIET_MINUTES_CHOICES:
        raise InvalidConfig("quietMinutes must be one of 5, 15, 30 or 60.", field="memorySettings.quietMinutes")
    out["quietMinutes"] = quiet
    out["showSwitch"] = checked_bool(merged["showSwitch"], "memorySettings.showSwitch")
    out["askFirst"] = checked_bool(merged["askFirst"], "memorySettings.askFirst")
    url = checked_text(merged["privacyUrl"], "memorySettings.privacyUrl", MAX_PRIVACY_URL_CHARS)
    if url:
        parsed = urlparse(url)
        # No space, line break (U+2028/2029 included), control or invisible format character
        # anywhere inside: the link is drawn on customers' pages and must be what it shows.
        hidden = any(unicodedata.category(char) in ("Cc", "Cf", "Zs", "Zl", "Zp") for char in url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc or hidden:
            raise InvalidConfig("privacyUrl must be an http:// or https:// address.", field="memorySettings.privacyUrl")
    out["privacyUrl"] = url
    return out


def describe_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Readable one-line descriptions of what differs, e.g. 'quiet minutes 30 -> 15'."""
    changes: list[str] = []
    for key, label in MEMORY_SETTINGS_LABELS.items():
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if key == "on":
            changes.append("memory on" if b else "memory off")
        elif isinstance(b, bool):
            changes.append(f"{label} {'on' if b else 'off'}")
        elif key == "instructions":
            changes.append("memory instructions changed")
        else:
            changes.append(f"{label} {a or '(none)'} -> {b or '(none)'}")
    return changes
