"""An agent's configuration: its shape, its defaults, and the one validator every path uses.

The web form, the Builder and the API all call `validate_config`, so invalid settings
(quietMinutes 7, keepForDays 0, a privacyUrl that is not http(s)) are refused everywhere
with the same message. The `memorySettings` part belongs to `memory` (`memory/store/settings.py`),
reached through the port `ports.memory_settings`; this module owns the rest (instructions,
guardrails, actions) and the plan rule (R3).
"""

import copy
import re
from typing import Any

from agents.errors import AppError, InvalidConfig
from agents.ports import ports

MAX_ACTIONS = 50
ACTION_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")

DEFAULT_CONFIG: dict[str, Any] = {
    "instructions": "You are a helpful support agent. Answer plainly and briefly.",
    "guardrails": "",
    "actions": [],
}


def default_config() -> dict[str, Any]:
    return {**copy.deepcopy(DEFAULT_CONFIG), "memorySettings": ports.memory_settings.default()}


def checked_bool(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidConfig(f"{field} must be true or false.", field=field)
    return value


def checked_text(value: Any, field: str, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidConfig(f"{field} must be text.", field=field)
    value = value.strip()
    if len(value) > limit:
        raise InvalidConfig(f"{field} is too long: at most {limit} characters.", field=field)
    return value


def checked_int(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidConfig(f"{field} must be a whole number.", field=field)
    return value


def validate_actions(actions: Any) -> list[dict[str, str]]:
    if not isinstance(actions, list) or len(actions) > MAX_ACTIONS:
        raise InvalidConfig(f"actions must be a list of at most {MAX_ACTIONS}.", field="actions")
    out, seen = [], set()
    for i, action in enumerate(actions):
        if not isinstance(action, dict) or set(action) - {"name", "label"}:
            raise InvalidConfig("Each action has a name and a past-tense label.", field=f"actions[{i}]")
        name = checked_text(action.get("name", ""), f"actions[{i}].name", 64)
        if not ACTION_NAME_RE.match(name):
            raise InvalidConfig(
                "An action name is lower-case letters, digits and underscores, e.g. renew_plan.",
                field=f"actions[{i}].name",
            )
        if name in seen:
            raise InvalidConfig(f"The action {name} is listed twice.", field=f"actions[{i}].name")
        seen.add(name)
        label = checked_text(action.get("label", ""), f"actions[{i}].label", 80) or name.replace("_", " ").capitalize()
        out.append({"name": name, "label": label})
    return out


def validate_config(config: Any, *, plan_has_memory: bool) -> dict[str, Any]:
    """Return a complete, normalised config, or raise.

    Refuses unknown keys, wrong types and out-of-range settings (InvalidConfig), and memory
    switched on for a plan without memory (AppError `plan_required`, R3).
    """
    if not isinstance(config, dict):
        raise InvalidConfig("The configuration must be an object.")
    unknown = sorted(set(config) - {*DEFAULT_CONFIG, "memorySettings"})
    if unknown:
        raise InvalidConfig(f"Unknown configuration field: {', '.join(unknown)}.", field=unknown[0])
    merged = {**default_config(), **config}
    out = {
        "instructions": checked_text(merged["instructions"], "instructions", 8000),
        "guardrails": checked_text(merged["guardrails"], "guardrails", 8000),
        "actions": validate_actions(merged["actions"]),
        "memorySettings": ports.memory_settings.validate(merged["memorySettings"]),
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
    changes = ports.memory_settings.describe_changes(old.get("memorySettings", {}), new.get("memorySettings", {}))
    for key in ("instructions", "guardrails"):
        if old.get(key) != new.get(key):
            changes.append(f"agent {key} changed")
    if old.get("actions") != new.get("actions"):
        changes.append("actions changed")
    return changes
