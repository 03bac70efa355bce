"""An agent's configuration: its shape, its defaults, and the one validator every path uses.

The web form, the Builder and the API all call `validate_config`, so invalid settings
(quietMinutes 7, keepForDays 0, a privacyUrl that is not http(s)) are refused everywhere
with the same message.
"""
import copy
import re
import unicodedata
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from .errors import AppError, InvalidConfig

QUIET_MINUTES_CHOICES = (5, 15, 30, 60)
KEEP_FOR_DAYS_MIN, KEEP_FOR_DAYS_MAX = 1, 3650
MAX_INSTRUCTIONS_CHARS = 4000
MAX_ACTIONS = 50
ACTION_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
# Checks memory instructions must pass, filled by `memory` in its AppConfig.ready (agents imports no other
# app): each takes the text and returns a refusal message, or None (the memory guards: no secrets).
INSTRUCTION_GUARDS: list[Callable[[str], str | None]] = []

DEFAULT_MEMORY_SETTINGS: dict[str, Any] = {
    "on": False,
    "instructions": "",
    "keepForDays": 90,
    "quietMinutes": 30,
    "showSwitch": True,
    "askFirst": False,
    "privacyUrl": "",
}

DEFAULT_CONFIG: dict[str, Any] = {
    "instructions": "You are a helpful support agent. Answer plainly and briefly.",
    "guardrails": "",
    "actions": [],
    "memorySettings": DEFAULT_MEMORY_SETTINGS,
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


def default_config() -> dict[str, Any]:
    return copy.deepcopy(DEFAULT_CONFIG)


def _bool(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidConfig(f"{field} must be true or false.", field=field)
    return value


def _text(value: Any, field: str, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidConfig(f"{field} must be text.", field=field)
    value = value.strip()
    if len(value) > limit:
        raise InvalidConfig(f"{field} is too long: at most {limit} characters.", field=field)
    return value


def _int(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidConfig(f"{field} must be a whole number.", field=field)
    return value


def validate_memory_settings(settings: Any) -> dict[str, Any]:
    """Return complete, normalised memory settings, or raise InvalidConfig naming the field."""
    if not isinstance(settings, dict):
        raise InvalidConfig("memorySettings must be an object.", field="memorySettings")
    unknown = sorted(set(settings) - set(DEFAULT_MEMORY_SETTINGS))
    if unknown:
        raise InvalidConfig(
            f"Unknown memory setting: {', '.join(unknown)}.", field=f"memorySettings.{unknown[0]}"
        )
    merged = {**DEFAULT_MEMORY_SETTINGS, **settings}
    out: dict[str, Any] = {}
    out["on"] = _bool(merged["on"], "memorySettings.on")
    out["instructions"] = _text(merged["instructions"], "memorySettings.instructions", MAX_INSTRUCTIONS_CHARS)
    for guard in INSTRUCTION_GUARDS:
        refusal = guard(out["instructions"])
        if refusal:
            refused = InvalidConfig(refusal, field="memorySettings.instructions")
            refused.plain = True  # already in plain words: the form and the Builder say it as it is
            raise refused
    keep = _int(merged["keepForDays"], "memorySettings.keepForDays")
    if not KEEP_FOR_DAYS_MIN <= keep <= KEEP_FOR_DAYS_MAX:
        raise InvalidConfig(
            f"keepForDays must be between {KEEP_FOR_DAYS_MIN} and {KEEP_FOR_DAYS_MAX} days.",
            field="memorySettings.keepForDays",
        )
    out["keepForDays"] = keep
    quiet = _int(merged["quietMinutes"], "memorySettings.quietMinutes")
    if quiet not in QUIET_MINUTES_CHOICES:
        raise InvalidConfig(
            "quietMinutes must be one of 5, 15, 30 or 60.", field="memorySettings.quietMinutes"
        )
    out["quietMinutes"] = quiet
    out["showSwitch"] = _bool(merged["showSwitch"], "memorySettings.showSwitch")
    out["askFirst"] = _bool(merged["askFirst"], "memorySettings.askFirst")
    url = _text(merged["privacyUrl"], "memorySettings.privacyUrl", 500)
    if url:
        parsed = urlparse(url)
        # No space, line break (U+2028/2029 included), control or invisible format character
        # anywhere inside: the link is drawn on customers' pages and must be what it shows.
        hidden = any(unicodedata.category(char) in ("Cc", "Cf", "Zs", "Zl", "Zp") for char in url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc or hidden:
            raise InvalidConfig(
                "privacyUrl must be an http:// or https:// address.", field="memorySettings.privacyUrl"
            )
    out["privacyUrl"] = url
    return out


def validate_actions(actions: Any) -> list[dict[str, str]]:
    if not isinstance(actions, list) or len(actions) > MAX_ACTIONS:
        raise InvalidConfig(f"actions must be a list of at most {MAX_ACTIONS}.", field="actions")
    out, seen = [], set()
    for i, action in enumerate(actions):
        if not isinstance(action, dict) or set(action) - {"name", "label"}:
            raise InvalidConfig("Each action has a name and a past-tense label.", field=f"actions[{i}]")
        name = _text(action.get("name", ""), f"actions[{i}].name", 64)
        if not ACTION_NAME_RE.match(name):
            raise InvalidConfig(
                "An action name is lower-case letters, digits and underscores, e.g. renew_plan.",
                field=f"actions[{i}].name",
            )
        if name in seen:
            raise InvalidConfig(f"The action {name} is listed twice.", field=f"actions[{i}].name")
        seen.add(name)
        label = _text(action.get("label", ""), f"actions[{i}].label", 80) or name.replace("_", " ").capitalize()
        out.append({"name": name, "label": label})
    return out


def validate_config(config: Any, *, plan_has_memory: bool) -> dict[str, Any]:
    """Return a complete, normalised config, or raise.

    Refuses unknown keys, wrong types and out-of-range settings (InvalidConfig), and memory
    switched on for a plan without memory (AppError `plan_required`, R3).
    """
    if not isinstance(config, dict):
        raise InvalidConfig("The configuration must be an object.")
    unknown = sorted(set(config) - set(DEFAULT_CONFIG))
    if unknown:
        raise InvalidConfig(f"Unknown configuration field: {', '.join(unknown)}.", field=unknown[0])
    merged = {**default_config(), **config}
    out = {
        "instructions": _text(merged["instructions"], "instructions", 8000),
        "guardrails": _text(merged["guardrails"], "guardrails", 8000),
        "actions": validate_actions(merged["actions"]),
        "memorySettings": validate_memory_settings(merged["memorySettings"]),
    }
    if out["memorySettings"]["on"] and not plan_has_memory:
        raise AppError(
            "plan_required",
            "Memory comes with the Team plan and up. Upgrade the team's plan to turn it on.",
            status=403,
            field="memorySettings.on",
        )
    return out


def merge_changes(config: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """Apply a partial change; `memorySettings` merges field by field, the rest replace."""
    if not isinstance(changes, dict):
        raise InvalidConfig("The change must be an object.")
    out = copy.deepcopy(config)
    for key, value in changes.items():
        if key == "memorySettings" and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def describe_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Readable one-line descriptions of what differs, e.g. 'quiet minutes 30 -> 15'."""
    changes: list[str] = []
    old_ms, new_ms = old.get("memorySettings", {}), new.get("memorySettings", {})
    for key, label in MEMORY_SETTINGS_LABELS.items():
        a, b = old_ms.get(key), new_ms.get(key)
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
    for key in ("instructions", "guardrails"):
        if old.get(key) != new.get(key):
            changes.append(f"agent {key} changed")
    if old.get("actions") != new.get("actions"):
        changes.append("actions changed")
    return changes
